#include "server/grpc/call_authentication.h"

#include "absl/strings/string_view.h"

#include "server/grpc/status_mapping.h"

namespace slotserve::server {

grpc::Status AuthenticateCall(const ApiKeyStore* keys, const grpc::CallbackServerContext& context,
                              ServerMetrics* metrics) {
  if (keys == nullptr) return grpc::Status::OK;
  absl::string_view authorization;
  const auto& metadata = context.client_metadata();
  if (auto found = metadata.find("authorization"); found != metadata.end()) {
    authorization = absl::string_view(found->second.data(), found->second.size());
  }
  absl::Status checked = keys->Authenticate(authorization);
  if (checked.ok()) return grpc::Status::OK;
  if (metrics != nullptr) metrics->OnUnauthenticated("grpc");
  return ToGrpcStatus(checked);
}

}  // namespace slotserve::server
