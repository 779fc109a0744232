// The server's TLS material (--tls-cert, --tls-key, optional --tls-client-ca), read and
// checked once at start-up so that a missing, unreadable or mismatched file stops the server
// with a message naming the flag and the file, instead of a handshake failing later on every
// connection. gRPC and the HTTP listener are both served from the same checked files
// (server/grpc/grpc_credentials.h makes gRPC's credentials of them).
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace slotserve::server {

struct TlsOptions {
  std::string cert_path;       // --tls-cert: PEM certificate chain, the server's own first
  std::string key_path;        // --tls-key: PEM private key of that certificate
  std::string client_ca_path;  // --tls-client-ca: PEM CA(s); set: clients must present a
                               // certificate signed by one of them (mutual TLS)
  bool enabled() const { return !cert_path.empty(); }
};

struct TlsFiles {
  TlsOptions paths;
  std::string cert_pem;
  std::string key_pem;
  std::string client_ca_pem;  // empty without --tls-client-ca
};

// nullopt when TLS is off. Otherwise the files' contents once each parses as PEM (a
// certificate, a private key, CA certificates) and the key belongs to the certificate;
// INVALID_ARGUMENT / NOT_FOUND naming the flag and the file when not.
absl::StatusOr<std::optional<TlsFiles>> LoadTlsFiles(const TlsOptions& options);

}  // namespace slotserve::server
