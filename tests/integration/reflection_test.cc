// Server reflection lists the API and the health service and serves their descriptors, so
// tools like grpcurl work without the .proto files.
#include <gtest/gtest.h>
#include "google/protobuf/descriptor.pb.h"
#include "grpc/reflection/v1alpha/reflection.grpc.pb.h"
#include "tests/integration/server_test.h"

namespace slotserve::testing {
namespace {

namespace reflection = grpc::reflection::v1alpha;

class ReflectionTest : public ServerTest {};

TEST_F(ReflectionTest, ListsTheServicesAndDescribesTheApi) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  auto stub = reflection::ServerReflection::NewStub(channel_);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  auto stream = stub->ServerReflectionInfo(&context);

  reflection::ServerReflectionRequest list;
  list.set_list_services("");
  ASSERT_TRUE(stream->Write(list));
  reflection::ServerReflectionResponse response;
  ASSERT_TRUE(stream->Read(&response));
  std::vector<std::string> services;
  for (const auto& service : response.list_services_response().service()) {
    services.push_back(service.name());
  }
  EXPECT_NE(std::find(services.begin(), services.end(), "slotserve.v1.SlotServe"), services.end());
  EXPECT_NE(std::find(services.begin(), services.end(), "grpc.health.v1.Health"), services.end());

  reflection::ServerReflectionRequest describe;
  describe.set_file_containing_symbol("slotserve.v1.SlotServe");
  ASSERT_TRUE(stream->Write(describe));
  ASSERT_TRUE(stream->Read(&response));
  ASSERT_GT(response.file_descriptor_response().file_descriptor_proto_size(), 0)
      << response.error_response().error_message();
  google::protobuf::FileDescriptorProto file;
  ASSERT_TRUE(file.ParseFromString(response.file_descriptor_response().file_descriptor_proto(0)));
  EXPECT_EQ(file.package(), "slotserve.v1");
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

}  // namespace
}  // namespace slotserve::testing
