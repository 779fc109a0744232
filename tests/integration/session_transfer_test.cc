// docs/ARCHITECTURE.md "Request state" export / import through real server processes: a session
// exported from one server and imported into a second process on the same model continues exactly
// as it continues on the first; a blob with one flipped byte, a truncated one, and one signed with
// another
// --state-key-file are refused with INVALID_ARGUMENT; unknown handles are NOT_FOUND.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "tests/integration/server_test.h"

namespace slotserve::testing {
namespace {

class SessionTransferTest : public ServerTest {
 protected:
  // A second server process beside the fixture's.
  std::unique_ptr<v1::SlotServe::Stub> StartSecond(const std::vector<std::string>& flags) {
    std::string error;
    second_ = ServerProcess::Start(flags, &error);
    EXPECT_NE(second_, nullptr) << error;
    if (second_ == nullptr) return nullptr;
    return v1::SlotServe::NewStub(second_->ConnectedChannel());
  }
  std::unique_ptr<ServerProcess> second_;
};

std::string WriteKeyFile(const std::string& name, const std::string& key) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << key << "\n";
  return path;
}

TEST_F(SessionTransferTest, AnImportedSessionContinuesAsOnTheServerThatExportedIt) {
  const std::string key = WriteKeyFile("state-key-a", "0123456789abcdef-shared-key");
  StartServer({"--state-key-file=" + key});
  auto second = StartSecond({"--state-key-file=" + key});
  ASSERT_NE(second, nullptr);

  const StreamResult first =
      Generate(*stub_, SessionTurn({1, 45, 67, 89, 101, 23, 7}, true, "", 6));
  ASSERT_TRUE(first.status.ok()) << first.status.error_message();
  std::string blob;
  ASSERT_TRUE(ExportSession(*stub_, first.finished->session_handle(), &blob).ok());
  EXPECT_GT(blob.size(), 100u);
  std::string imported;
  const grpc::Status imported_status = ImportSession(*second, blob, &imported);
  ASSERT_TRUE(imported_status.ok()) << imported_status.error_message();
  ASSERT_FALSE(imported.empty());

  const StreamResult there = Generate(*second, SessionTurn({12, 250, 31}, false, imported, 8));
  ASSERT_TRUE(there.status.ok()) << there.status.error_message();
  const StreamResult here =
      Generate(*stub_, SessionTurn({12, 250, 31}, false, first.finished->session_handle(), 8));
  ASSERT_TRUE(here.status.ok());
  EXPECT_EQ(there.ids, here.ids);
  ASSERT_EQ(there.ids.size(), 8u);
}

TEST_F(SessionTransferTest, DamagedForgedAndUnknownStatesAreRefused) {
  StartServer({"--state-key-file=" + WriteKeyFile("state-key-b", "key-number-one-0123456789")});
  auto other_key =
      StartSecond({"--state-key-file=" + WriteKeyFile("state-key-c", "key-number-two-0123456789")});
  ASSERT_NE(other_key, nullptr);
  std::string blob;
  EXPECT_EQ(ExportSession(*stub_, "ss-00000000000000000000000000000000", &blob).error_code(),
            grpc::StatusCode::NOT_FOUND);
  const StreamResult first = Generate(*stub_, SessionTurn({5, 6, 7}, true, "", 3));
  ASSERT_TRUE(first.status.ok());
  ASSERT_TRUE(ExportSession(*stub_, first.finished->session_handle(), &blob).ok());

  std::string handle;
  std::string flipped = blob;
  flipped[flipped.size() / 2] ^= 0x01;
  const grpc::Status damaged = ImportSession(*stub_, flipped, &handle);
  EXPECT_EQ(damaged.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(damaged.error_message().find("state blob"), std::string::npos)
      << damaged.error_message();
  EXPECT_EQ(ImportSession(*stub_, blob.substr(0, blob.size() - 7), &handle).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(ImportSession(*stub_, "", &handle).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  const grpc::Status forged = ImportSession(*other_key, blob, &handle);
  EXPECT_EQ(forged.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << forged.error_message();
  EXPECT_TRUE(ImportSession(*stub_, blob, &handle).ok()) << "the intact blob still imports";
}

}  // namespace
}  // namespace slotserve::testing
