#include "server/grpc/reflection_v1_service.h"

#include <unordered_set>
#include <utility>

#include <grpcpp/impl/server_builder_plugin.h>
#include <grpcpp/impl/server_initializer.h>
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"

namespace slotserve::server {
namespace {

namespace reflection = grpc::reflection::v1;
using google::protobuf::DescriptorPool;
using google::protobuf::FileDescriptor;

// Answers one request. A file comes with every file it depends on, each once per answer (as
// gRPC's v1alpha service does), so a client can build the descriptors from one response.
class RequestAnswerer {
 public:
  explicit RequestAnswerer(const std::vector<std::string>* services)
      : pool_(*DescriptorPool::generated_pool()), services_(services) {}

  void Answer(const reflection::ServerReflectionRequest& request,
              reflection::ServerReflectionResponse* response) {
    response->set_valid_host(request.host());
    *response->mutable_original_request() = request;
    switch (request.message_request_case()) {
      case reflection::ServerReflectionRequest::kListServices:
        for (const std::string& name : services_ != nullptr ? *services_ : NoServices()) {
          response->mutable_list_services_response()->add_service()->set_name(name);
        }
        return;
      case reflection::ServerReflectionRequest::kFileByFilename:
        return SendFile(pool_.FindFileByName(request.file_by_filename()),
                        absl::StrCat("file ", request.file_by_filename()), response);
      case reflection::ServerReflectionRequest::kFileContainingSymbol:
        return SendFile(pool_.FindFileContainingSymbol(request.file_containing_symbol()),
                        absl::StrCat("symbol ", request.file_containing_symbol()), response);
      case reflection::ServerReflectionRequest::kFileContainingExtension: {
        const reflection::ExtensionRequest& extension = request.file_containing_extension();
        const google::protobuf::Descriptor* type =
            pool_.FindMessageTypeByName(extension.containing_type());
        const google::protobuf::FieldDescriptor* field =
            type == nullptr ? nullptr
                            : pool_.FindExtensionByNumber(type, extension.extension_number());
        return SendFile(field == nullptr ? nullptr : field->file(),
                        absl::StrCat("extension ", extension.extension_number(), " of ",
                                     extension.containing_type()),
                        response);
      }
      case reflection::ServerReflectionRequest::kAllExtensionNumbersOfType: {
        const std::string& name = request.all_extension_numbers_of_type();
        const google::protobuf::Descriptor* type = pool_.FindMessageTypeByName(name);
        if (type == nullptr)
          return Error(grpc::StatusCode::NOT_FOUND,
                       absl::StrCat("message type ", name, " not found"), response);
        std::vector<const google::protobuf::FieldDescriptor*> extensions;
        pool_.FindAllExtensions(type, &extensions);
        reflection::ExtensionNumberResponse* numbers =
            response->mutable_all_extension_numbers_response();
        numbers->set_base_type_name(type->full_name());
        for (const auto* extension : extensions) numbers->add_extension_number(extension->number());
        return;
      }
      case reflection::ServerReflectionRequest::MESSAGE_REQUEST_NOT_SET:
        return Error(grpc::StatusCode::INVALID_ARGUMENT,
                     "the request sets none of file_by_filename, file_containing_symbol, "
                     "file_containing_extension, all_extension_numbers_of_type, list_services",
                     response);
    }
    Error(grpc::StatusCode::UNIMPLEMENTED, "unknown reflection request", response);
  }

 private:
  static const std::vector<std::string>& NoServices() {
    static const std::vector<std::string>* none = new std::vector<std::string>();
    return *none;
  }

  static void Error(grpc::StatusCode code, std::string message,
                    reflection::ServerReflectionResponse* response) {
    response->mutable_error_response()->set_error_code(code);
    response->mutable_error_response()->set_error_message(std::move(message));
  }

  void SendFile(const FileDescriptor* file, const std::string& what,
                reflection::ServerReflectionResponse* response) {
    if (file == nullptr) {
      return Error(grpc::StatusCode::NOT_FOUND, absl::StrCat(what, " not found"), response);
    }
    std::unordered_set<std::string> sent;
    AddWithDependencies(file, response->mutable_file_descriptor_response(), sent);
  }

  // The file first (clients read element 0 as the answer), then its unsent dependencies.
  void AddWithDependencies(const FileDescriptor* file, reflection::FileDescriptorResponse* out,
                           std::unordered_set<std::string>& sent) {
    if (!sent.insert(file->name()).second) return;
    google::protobuf::FileDescriptorProto proto;
    file->CopyTo(&proto);
    proto.SerializeToString(out->add_file_descriptor_proto());
    for (int i = 0; i < file->dependency_count(); ++i) {
      AddWithDependencies(file->dependency(i), out, sent);
    }
  }

  const DescriptorPool& pool_;
  const std::vector<std::string>* services_;
};

class ReflectionV1Plugin final : public grpc::ServerBuilderPlugin {
 public:
  std::string name() override { return "slotserve_reflection_v1"; }
  void InitServer(grpc::ServerInitializer* initializer) override {
    initializer->RegisterService(service_);
  }
  void Finish(grpc::ServerInitializer* initializer) override {
    service_->SetServiceList(initializer->GetServiceList());
  }
  void ChangeArguments(const std::string& /*name*/, void* /*value*/) override {}
  bool has_sync_methods() const override { return true; }

 private:
  std::shared_ptr<ReflectionV1Service> service_ = std::make_shared<ReflectionV1Service>();
};

class ReflectionV1BuilderOption final : public grpc::ServerBuilderOption {
 public:
  void UpdateArguments(grpc::ChannelArguments* /*args*/) override {}
  void UpdatePlugins(std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>* plugins) override {
    plugins->push_back(std::make_unique<ReflectionV1Plugin>());
  }
};

}  // namespace

grpc::Status ReflectionV1Service::ServerReflectionInfo(
    grpc::ServerContext* /*context*/,
    grpc::ServerReaderWriter<reflection::ServerReflectionResponse,
                             reflection::ServerReflectionRequest>* stream) {
  RequestAnswerer answerer(services_);
  reflection::ServerReflectionRequest request;
  while (stream->Read(&request)) {
    reflection::ServerReflectionResponse response;
    answerer.Answer(request, &response);
    if (!stream->Write(response)) break;
  }
  return grpc::Status::OK;
}

std::unique_ptr<grpc::ServerBuilderOption> ReflectionV1Option() {
  return std::make_unique<ReflectionV1BuilderOption>();
}

}  // namespace slotserve::server
