// Server reflection lists the API and the health service and serves their descriptors, so
// tools like grpcurl work without the .proto files. Both protocol versions are served: v1alpha
// (gRPC's own) and v1 (ours; current tools ask for it first — issue 15, defect 4). The same
// test body runs against each.
#include <gtest/gtest.h>
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
