// Server reflection lists the API and the health service and serves their descriptors, so
// tools like grpcurl work without the .proto files. Both protocol versions are served: v1alpha
// (gRPC's own) and v1 (ours; current tools ask for it first — issue 15, defect 4). The same
// test body runs against each.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"
#include "grpc/reflection/v1/reflection.grpc.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "tests/integration/server_test.h"

namespace slotserve::testing {
namespace {

template <typename Reflection>
class ReflectionTest : public ServerTest {};

struct V1Alpha {
  using ServerReflection = grpc::reflection::v1alpha::ServerReflection;
  using Request = grpc::reflection::v1alpha::ServerReflectionRequest;
  using Response = grpc::reflection::v1alpha::ServerReflectionResponse;
};
struct V1 {
  using ServerReflection = grpc::reflection::v1::ServerReflection;
  using Request = grpc::reflection::v1::ServerReflectionRequest;
  using Response = grpc::reflection::v1::ServerReflectionResponse;
};
using Versions = ::testing::Types<V1Alpha, V1>;
TYPED_TEST_SUITE(ReflectionTest, Versions);

// One request and its answer on the reflection stream: the files it returned, or its error.
template <typename Reflection, typename Stream>
typename Reflection::Response Ask(Stream& stream, const typename Reflection::Request& request) {
  typename Reflection::Response response;
  EXPECT_TRUE(stream.Write(request));
  EXPECT_TRUE(stream.Read(&response));
  return response;
}

// What grpcurl describe does for a service: fetch the file that defines it and every file
// that one imports (by name), build them into a pool of our own, and find the service and
// each method's request and response types there. Fails naming what could not be resolved.
template <typename Reflection, typename Stream>
void ExpectServiceResolves(Stream& stream, const std::string& service_name) {
  std::map<std::string, google::protobuf::FileDescriptorProto> files;
  auto take_files = [&](const typename Reflection::Response& response) {
    for (const std::string& bytes : response.file_descriptor_response().file_descriptor_proto()) {
      google::protobuf::FileDescriptorProto file;
      ASSERT_TRUE(file.ParseFromString(bytes));
      files[file.name()] = file;
    }
  };
  typename Reflection::Request by_symbol;
  by_symbol.set_file_containing_symbol(service_name);
  const typename Reflection::Response defining = Ask<Reflection>(stream, by_symbol);
  ASSERT_GT(defining.file_descriptor_response().file_descriptor_proto_size(), 0)
      << service_name << ": " << defining.error_response().error_message();
  ASSERT_NO_FATAL_FAILURE(take_files(defining));
  for (bool fetched = true; fetched;) {  // imports the server did not send along
    fetched = false;
    std::set<std::string> missing;
    for (const auto& [name, file] : files) {
      for (const std::string& dependency : file.dependency()) {
        if (!files.count(dependency)) missing.insert(dependency);
      }
    }
    for (const std::string& dependency : missing) {
      typename Reflection::Request by_name;
      by_name.set_file_by_filename(dependency);
      const typename Reflection::Response imported = Ask<Reflection>(stream, by_name);
      ASSERT_GT(imported.file_descriptor_response().file_descriptor_proto_size(), 0)
          << service_name << " imports " << dependency << ": "
          << imported.error_response().error_message();
      ASSERT_NO_FATAL_FAILURE(take_files(imported));
      fetched = true;
    }
  }
  google::protobuf::DescriptorPool pool;
  std::set<std::string> built;
  std::function<void(const std::string&)> build = [&](const std::string& name) {
    if (!built.insert(name).second) return;
    for (const std::string& dependency : files.at(name).dependency()) build(dependency);
    EXPECT_NE(pool.BuildFile(files.at(name)), nullptr) << name;
  };
  for (const auto& [name, file] : files) build(name);
  const google::protobuf::ServiceDescriptor* service = pool.FindServiceByName(service_name);
  ASSERT_NE(service, nullptr) << service_name << " is not in the files reflection sent";
  ASSERT_GT(service->method_count(), 0) << service_name;
  for (int i = 0; i < service->method_count(); ++i) {
    const google::protobuf::MethodDescriptor* method = service->method(i);
    // grpcurl looks each type up by symbol too, to encode and decode the messages.
    for (const google::protobuf::Descriptor* type : {method->input_type(), method->output_type()}) {
      typename Reflection::Request by_type;
      by_type.set_file_containing_symbol(type->full_name());
      const typename Reflection::Response answer = Ask<Reflection>(stream, by_type);
      EXPECT_GT(answer.file_descriptor_response().file_descriptor_proto_size(), 0)
          << method->full_name() << " uses " << type->full_name() << ": "
          << answer.error_response().error_message();
    }
  }
}

TYPED_TEST(ReflectionTest, ListsTheServicesAndDescribesTheApi) {
  ASSERT_NO_FATAL_FAILURE(this->StartServer());
  auto stub = TypeParam::ServerReflection::NewStub(this->channel_);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  auto stream = stub->ServerReflectionInfo(&context);

  typename TypeParam::Request list;
  list.set_list_services("");
  ASSERT_TRUE(stream->Write(list));
  typename TypeParam::Response response;
  ASSERT_TRUE(stream->Read(&response));
  std::vector<std::string> services;
  for (const auto& service : response.list_services_response().service()) {
    services.push_back(service.name());
  }
  for (const char* name :
       {"slotserve.v1.SlotServe", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection"}) {
    EXPECT_NE(std::find(services.begin(), services.end(), name), services.end()) << name;
  }

  // Every listed service can be described, down to its methods' types (issue 57: the health
  // service was listed, but describing it answered NOT_FOUND).
  for (const std::string& service : services) {
    SCOPED_TRACE(service);
    ExpectServiceResolves<TypeParam>(*stream, service);
  }

  typename TypeParam::Request describe;
  describe.set_file_containing_symbol("slotserve.v1.SlotServe.Generate");
  ASSERT_TRUE(stream->Write(describe));
  ASSERT_TRUE(stream->Read(&response));
  ASSERT_GT(response.file_descriptor_response().file_descriptor_proto_size(), 0)
      << response.error_response().error_message();
  google::protobuf::FileDescriptorProto file;
  ASSERT_TRUE(file.ParseFromString(response.file_descriptor_response().file_descriptor_proto(0)));
  EXPECT_EQ(file.package(), "slotserve.v1");
  ASSERT_GT(file.service_size(), 0);
  EXPECT_EQ(file.service(0).name(), "SlotServe");

  typename TypeParam::Request by_name;
  by_name.set_file_by_filename("slotserve/v1/slotserve.proto");
  ASSERT_TRUE(stream->Write(by_name));
  ASSERT_TRUE(stream->Read(&response));
  ASSERT_GT(response.file_descriptor_response().file_descriptor_proto_size(), 0)
      << response.error_response().error_message();
  ASSERT_TRUE(file.ParseFromString(response.file_descriptor_response().file_descriptor_proto(0)));
  EXPECT_EQ(file.name(), "slotserve/v1/slotserve.proto");

  typename TypeParam::Request unknown;
  unknown.set_file_containing_symbol("no.such.Service");
  ASSERT_TRUE(stream->Write(unknown));
  ASSERT_TRUE(stream->Read(&response));
  EXPECT_EQ(response.error_response().error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(response.original_request().file_containing_symbol(), "no.such.Service");
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

}  // namespace
}  // namespace slotserve::testing
