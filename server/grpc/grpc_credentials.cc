#include "server/grpc/grpc_credentials.h"

namespace slotserve::server {

std::shared_ptr<grpc::ServerCredentials> GrpcServerCredentials(const TlsFiles& files) {
  grpc::SslServerCredentialsOptions options(
      files.client_ca_pem.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                  : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = files.client_ca_pem;
  options.pem_key_cert_pairs.push_back({files.key_pem, files.cert_pem});
  return grpc::SslServerCredentials(options);
}

}  // namespace slotserve::server
