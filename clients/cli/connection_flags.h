// How slotserve-cli reaches the server: --tls-ca (its presence means TLS), --tls-cert and
// --tls-key (a client certificate, for servers started with --tls-client-ca),
// --tls-server-name (the name checked in the server's certificate, when it differs from the
// address) and --api-key (or $SLOTSERVE_API_KEY), sent as `authorization: Bearer <key>`.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>
#include "absl/status/statusor.h"

namespace slotserve::clients {

// A channel to `server` as the flags say; INVALID_ARGUMENT naming the flag and file when a
// file cannot be read or the flags do not fit together.
absl::StatusOr<std::shared_ptr<grpc::Channel>> ChannelFromFlags(const std::string& server);

// --api-key, else $SLOTSERVE_API_KEY, else "" (no key sent).
std::string ApiKeyFromFlags();

}  // namespace slotserve::clients
