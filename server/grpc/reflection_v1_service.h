// Server reflection, protocol version grpc.reflection.v1, beside gRPC's own v1alpha service.
//
// Debian 12's gRPC (1.51) serves only grpc.reflection.v1alpha; grpcurl and the other current
// tools ask for v1 first. The two protocols have the same messages, so this service answers v1
// from the same source v1alpha uses: the descriptors compiled into the binary
// (DescriptorPool::generated_pool()) and the list of services the server registered.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/server_builder_option.h>
#include "grpc/reflection/v1/reflection.grpc.pb.h"

namespace slotserve::server {

class ReflectionV1Service final : public grpc::reflection::v1::ServerReflection::Service {
 public:
  grpc::Status ServerReflectionInfo(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<grpc::reflection::v1::ServerReflectionResponse,
                               grpc::reflection::v1::ServerReflectionRequest>* stream) override;

  // The fully qualified names list_services answers with; set once the server is built.
  void SetServiceList(const std::vector<std::string>* services) { services_ = services; }

 private:
  const std::vector<std::string>* services_ = nullptr;
};

// Adds reflection v1 to a grpc::ServerBuilder (builder.SetOption(...)): registers the service
// and hands it the server's service list once every service is registered.
std::unique_ptr<grpc::ServerBuilderOption> ReflectionV1Option();

}  // namespace slotserve::server
