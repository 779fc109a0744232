#include "clients/cli/connection_flags.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"

ABSL_FLAG(std::string, tls_ca, "",
          "PEM file of the CA(s) to trust for the server's certificate; given: connect over TLS");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM client certificate (chain), for servers that require one (--tls-client-ca); "
          "needs --tls-key and --tls-ca");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls-cert");
ABSL_FLAG(std::string, tls_server_name, "",
          "Name to check in the server's certificate instead of the --server host");
ABSL_FLAG(std::string, api_key, "",
          "API key sent as 'authorization: Bearer <key>' (default: $SLOTSERVE_API_KEY)");

namespace slotserve::clients {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& flag, const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, "=", path, ": cannot read the file (missing or not readable)"));
  }
  std::ostringstream text;
  text << file.rdbuf();
  return std::move(text).str();
}

// No cap on what the server sends: an exported session is a whole state, and a softmax model's
// is past gRPC's default 4 MiB.
grpc::ChannelArguments UnlimitedReceive() {
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(-1);
  return arguments;
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::Channel>> ChannelFromFlags(const std::string& server) {
  const std::string ca = absl::GetFlag(FLAGS_tls_ca);
  const std::string cert = absl::GetFlag(FLAGS_tls_cert);
  const std::string key = absl::GetFlag(FLAGS_tls_key);
  const std::string server_name = absl::GetFlag(FLAGS_tls_server_name);
  if (ca.empty()) {
    if (!cert.empty() || !key.empty() || !server_name.empty()) {
      return absl::InvalidArgumentError(
          "--tls-cert, --tls-key and --tls-server-name need --tls-ca (which turns TLS on)");
    }
    return grpc::CreateCustomChannel(server, grpc::InsecureChannelCredentials(),
                                     UnlimitedReceive());
  }
  if (cert.empty() != key.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key must be given together");
  }
  grpc::SslCredentialsOptions options;
  absl::StatusOr<std::string> roots = ReadFile("--tls-ca", ca);
  if (!roots.ok()) return roots.status();
  options.pem_root_certs = *std::move(roots);
  if (!cert.empty()) {
    absl::StatusOr<std::string> chain = ReadFile("--tls-cert", cert);
    if (!chain.ok()) return chain.status();
    absl::StatusOr<std::string> private_key = ReadFile("--tls-key", key);
    if (!private_key.ok()) return private_key.status();
    options.pem_cert_chain = *std::move(chain);
    options.pem_private_key = *std::move(private_key);
  }
  grpc::ChannelArguments arguments = UnlimitedReceive();
  if (!server_name.empty()) arguments.SetSslTargetNameOverride(server_name);
  return grpc::CreateCustomChannel(server, grpc::SslCredentials(options), arguments);
}

std::string ApiKeyFromFlags() {
  std::string key = absl::GetFlag(FLAGS_api_key);
  if (key.empty()) {
    if (const char* from_env = std::getenv("SLOTSERVE_API_KEY")) key = from_env;
  }
  return key;
}

}  // namespace slotserve::clients
