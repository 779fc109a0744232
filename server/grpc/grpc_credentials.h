// gRPC's server credentials for the TLS files checked at start-up (server/tls_files.h): the
// files are shared with the HTTP listener, the credentials are gRPC's alone.
#pragma once

#include <memory>

#include <grpcpp/security/server_credentials.h>

#include "server/tls_files.h"

namespace slotserve::server {

// gRPC's credentials for `files`; with a client CA, clients without a certificate signed by
// it are refused during the handshake.
std::shared_ptr<grpc::ServerCredentials> GrpcServerCredentials(const TlsFiles& files);

}  // namespace slotserve::server
