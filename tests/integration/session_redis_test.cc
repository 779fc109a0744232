// The shared session store (--session-store redis://, DESIGN §9) through real processes: a
// real redis-server and two server replicas on the bundled model. A conversation alternating
// between the replicas turn by turn streams exactly the tokens of the same conversation on one
// server; killing a replica loses no session; one request per session holds across replicas;
// and Redis going away gives UNAVAILABLE quoting the cause, frees every slot, and crashes
// nothing. Skipped (saying why) only when redis-server is not installed.
#include <signal.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "slotserve/v1/slotserve.grpc.pb.h"
#include "tests/integration/redis_process.h"
#include "tests/integration/server_process.h"
#include "tests/integration/test_client.h"

namespace slotserve::testing {
namespace {

struct Replica {
  std::unique_ptr<ServerProcess> process;
  std::unique_ptr<v1::SlotServe::Stub> stub;
};

bool PoolIsFull(v1::SlotServe::Stub& stub) {
  const v1::ModelInfo info = GetModelInfo(stub);
  return info.slots_total() > 0 && info.slots_free() == info.slots_total() &&
         info.requests_running() == 0 && info.requests_queued() == 0;
}

class SessionRedisTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RedisProcess::FindBinary().empty()) {
      GTEST_SKIP() << "redis-server is not installed (apt-get install redis-server; "
                      "scripts/install-deps.sh does): the shared session store is not tested";
    }
    std::string error;
    redis_ = RedisProcess::Start(&error);
    ASSERT_NE(redis_, nullptr) << error;
  }

  // A replica on `model_dir`; `session_store` "" = the default in-memory store.
  Replica StartReplica(const std::string& session_store,
                       const std::string& model_dir = SLOTSERVE_BUNDLED_MODEL_DIR) {
    // The tiny model's long context lets a stream hold a session for as long as a test needs.
    std::vector<std::string> flags = {"--model=" + model_dir, "--max-slots=4",
                                      "--max-new-tokens-limit=200000"};
    if (!session_store.empty()) flags.push_back("--session-store=" + session_store);
    std::string error;
    Replica replica;
    replica.process = ServerProcess::Start(flags, &error);
    EXPECT_NE(replica.process, nullptr) << error;
    if (replica.process != nullptr) {
      replica.stub = v1::SlotServe::NewStub(replica.process->ConnectedChannel());
    }
    return replica;
  }

  std::unique_ptr<RedisProcess> redis_;
};

const std::vector<std::vector<int32_t>> kTurns = {
    {1, 45, 67, 89, 101, 23, 7, 150, 33}, {12, 250, 31}, {77, 5, 300, 41}, {9, 18, 27}, {64, 3}};

TEST_F(SessionRedisTest, AConversationAlternatingReplicasEqualsOneServerAndSurvivesAKill) {
  Replica a = StartReplica(redis_->url());
  Replica b = StartReplica(redis_->url());
  Replica single = StartReplica("");
  ASSERT_TRUE(a.stub && b.stub && single.stub);

  std::string shared_handle;
  std::string single_handle;
  for (size_t turn = 0; turn < kTurns.size(); ++turn) {
    // Turns 0, 2 on A; 1, 3 on B; A is killed before the last turn, which B serves.
    if (turn == kTurns.size() - 1) a.process->Signal(SIGKILL);
    Replica& replica = (turn % 2 == 0 && turn != kTurns.size() - 1) ? a : b;
    const StreamResult shared =
        Generate(*replica.stub, SessionTurn(kTurns[turn], true, shared_handle, 6));
    ASSERT_TRUE(shared.status.ok()) << "turn " << turn << ": " << shared.status.error_message();
    const StreamResult alone =
        Generate(*single.stub, SessionTurn(kTurns[turn], true, single_handle, 6));
    ASSERT_TRUE(alone.status.ok()) << alone.status.error_message();
    EXPECT_EQ(shared.ids, alone.ids) << "turn " << turn;
    ASSERT_EQ(shared.ids.size(), 6u);
    if (turn == 0) shared_handle = shared.finished->session_handle();
    EXPECT_EQ(shared.finished->session_handle(), shared_handle);
    single_handle = alone.finished->session_handle();
  }
  ASSERT_EQ(shared_handle.size(), 35u) << shared_handle;
  EXPECT_TRUE(PoolIsFull(*b.stub));
}

TEST_F(SessionRedisTest, ASessionHeldOnOneReplicaIsRefusedOnTheOtherUntilReleased) {
  Replica a = StartReplica(redis_->url(), TinyModelDir());
  Replica b = StartReplica(redis_->url(), TinyModelDir());
  ASSERT_TRUE(a.stub && b.stub);
  const StreamResult first = Generate(*a.stub, SessionTurn({5, 6}, true, "", 2));
  ASSERT_TRUE(first.status.ok()) << first.status.error_message();
  const std::string handle = first.finished->session_handle();

  grpc::ClientContext context;
  auto reader = a.stub->Generate(&context, SessionTurn({7}, true, handle, 100000));
  v1::GenerateResponse message;
  ASSERT_TRUE(reader->Read(&message));
  const StreamResult refused = Generate(*b.stub, SessionTurn({8}, false, handle, 2));
  EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION)
      << refused.status.error_message();
  context.TryCancel();
  while (reader->Read(&message)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  // The cancellation reaches A's engine thread a moment after the client sees it.
  EXPECT_TRUE(WaitFor([&] { return PoolIsFull(*a.stub); }, absl::Seconds(10)));
  const StreamResult continued = Generate(*b.stub, SessionTurn({8}, false, handle, 2));
  EXPECT_TRUE(continued.status.ok()) << continued.status.error_message();
  const StreamResult unknown =
      Generate(*b.stub, SessionTurn({8}, false, "ss-00000000000000000000000000000000", 2));
  EXPECT_EQ(unknown.status.error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(SessionRedisTest, RedisGoneIsUnavailableQuotingTheCauseAndLeaksNoSlot) {
  Replica a = StartReplica(redis_->url());
  ASSERT_TRUE(a.stub);
  const StreamResult first = Generate(*a.stub, SessionTurn({5, 6}, true, "", 2));
  ASSERT_TRUE(first.status.ok()) << first.status.error_message();
  const std::string handle = first.finished->session_handle();
  redis_->Kill();

  const StreamResult continued = Generate(*a.stub, SessionTurn({8}, true, handle, 2));
  EXPECT_EQ(continued.status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_NE(continued.status.error_message().find("session store " + redis_->url()),
            std::string::npos)
      << continued.status.error_message();
  // Keeping a new session: the tokens are generated, but the state cannot be stored.
  const StreamResult kept = Generate(*a.stub, SessionTurn({9, 10}, true, "", 2));
  EXPECT_EQ(kept.status.error_code(), grpc::StatusCode::UNAVAILABLE) << kept.status.error_message();
  EXPECT_NE(kept.status.error_message().find("redis://"), std::string::npos)
      << kept.status.error_message();
  EXPECT_TRUE(PoolIsFull(*a.stub));
  // Requests without sessions are untouched.
  const StreamResult plain = Generate(*a.stub, SessionTurn({9, 10}, false, "", 2));
  EXPECT_TRUE(plain.status.ok()) << plain.status.error_message();
}

}  // namespace
}  // namespace slotserve::testing
