// The shared session store (--session-store redis://, docs/ARCHITECTURE.md "Request state") through
// real processes: a real redis-server and two server replicas on the bundled model. A conversation
// alternating between the replicas turn by turn streams exactly the tokens of the same conversation
// on one server; killing a replica loses no session; one request per session holds across replicas;
// Redis going away gives UNAVAILABLE quoting the cause, frees every slot, and crashes
// nothing; and the faults of issue 58: a connection Redis dropped fails no request, a stopped
// Redis is a time-out that says so and stalls no other stream, and a session held by a killed
// replica is free again within one lease, while a replica that lost its lease cannot overwrite
// a newer state. Skipped (saying why) only when redis-server is not installed.
#include <signal.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"

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

// A new session kept on `replica` by a first turn ({5, 6}); "" when that failed.
std::string NewSession(Replica& replica) {
  const StreamResult first = Generate(*replica.stub, SessionTurn({5, 6}, true, "", 2));
  EXPECT_TRUE(first.status.ok()) << first.status.error_message();
  return first.status.ok() ? first.finished->session_handle() : "";
}

// redis-cli (beside redis-server) against `redis`, with `args`.
CommandResult RedisCli(const RedisProcess& redis, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {
      (std::filesystem::path(RedisProcess::FindBinary()).parent_path() / "redis-cli").string(),
      "-p", std::to_string(redis.port())};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv);
}

// Issue 58, fault 2: a connection Redis closed fails no request while Redis is up.
TEST_F(SessionRedisTest, AConnectionRedisDroppedIsReplacedWithoutFailingARequest) {
  Replica a = StartReplica(redis_->url(), TinyModelDir());
  ASSERT_TRUE(a.stub);
  const std::string handle = NewSession(a);
  ASSERT_FALSE(handle.empty());

  // Every client connection cut (as on a Redis failover or a proxy's restart).
  const CommandResult killed = RedisCli(*redis_, {"CLIENT", "KILL", "TYPE", "normal"});
  ASSERT_EQ(killed.exit_status, 0) << killed.out << killed.err;
  const StreamResult after_kill = Generate(*a.stub, SessionTurn({7}, true, handle, 2));
  ASSERT_TRUE(after_kill.status.ok()) << after_kill.status.error_message();
  ASSERT_TRUE(RedisCli(*redis_, {"CLIENT", "KILL", "TYPE", "normal"}).exit_status == 0);
  const StreamResult new_after_kill = Generate(*a.stub, SessionTurn({8}, true, "", 2));
  ASSERT_TRUE(new_after_kill.status.ok()) << new_after_kill.status.error_message();

  // Redis's own idle timeout closes the replica's connection while it has nothing to do.
  ASSERT_EQ(RedisCli(*redis_, {"CONFIG", "SET", "timeout", "1"}).exit_status, 0);
  absl::SleepFor(absl::Milliseconds(3500));
  const StreamResult after_idle = Generate(*a.stub, SessionTurn({9}, true, handle, 2));
  EXPECT_TRUE(after_idle.status.ok()) << after_idle.status.error_message();
  EXPECT_EQ(after_idle.finished->session_handle(), handle);
  EXPECT_TRUE(PoolIsFull(*a.stub));
}

// A hung Redis is a time-out, and the error says so, naming the store and the operation.
TEST_F(SessionRedisTest, AStoppedRedisTimesOutNamingTheStoreAndTheOperation) {
  Replica a = StartReplica(redis_->url(), TinyModelDir());
  ASSERT_TRUE(a.stub);
  const std::string handle = NewSession(a);
  ASSERT_FALSE(handle.empty());
  redis_->Signal(SIGSTOP);
  const StreamResult continued = Generate(*a.stub, SessionTurn({8}, true, handle, 2));
  redis_->Signal(SIGCONT);
  EXPECT_EQ(continued.status.error_code(), grpc::StatusCode::UNAVAILABLE);
  const std::string& message = continued.status.error_message();
  EXPECT_TRUE(absl::StrContains(message, "session store " + redis_->url())) << message;
  EXPECT_TRUE(absl::StrContains(message, "locking session " + handle)) << message;
  EXPECT_TRUE(absl::StrContains(message, "timed out after 2s")) << message;
}

// Issue 58, fault 3: the lock is a lease, renewed while the request runs, so a replica killed
// mid-continuation frees the session within seconds, not 10 minutes.
TEST_F(SessionRedisTest, ASessionHeldByAKilledReplicaIsFreeAgainWithinALease) {
  // The bundled model: slow enough that one request outlasts a lease.
  Replica a = StartReplica(redis_->url());
  Replica b = StartReplica(redis_->url());
  ASSERT_TRUE(a.stub && b.stub);
  const std::string handle = NewSession(a);
  ASSERT_FALSE(handle.empty());

  grpc::ClientContext context;
  auto reader = a.stub->Generate(
      &context, SessionTurn({7}, true, handle, TokensLasting(*a.stub, absl::Seconds(40))));
  v1::GenerateResponse message;
  ASSERT_TRUE(reader->Read(&message));
  // Longer than one lease (6 s): A renews it while its request runs, so B is still refused.
  absl::SleepFor(absl::Seconds(8));
  const StreamResult refused = Generate(*b.stub, SessionTurn({8}, false, handle, 2));
  ASSERT_EQ(refused.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION)
      << refused.status.error_message();
  ASSERT_TRUE(reader->Read(&message)) << "A's request still runs";

  a.process->Signal(SIGKILL);
  const absl::Time killed = absl::Now();
  context.TryCancel();
  while (reader->Read(&message)) {
  }
  reader->Finish();
  StreamResult continued;
  EXPECT_TRUE(WaitFor(
      [&] {
        continued = Generate(*b.stub, SessionTurn({8}, false, handle, 2));
        return continued.status.error_code() != grpc::StatusCode::FAILED_PRECONDITION;
      },
      absl::Seconds(30)));
  EXPECT_TRUE(continued.status.ok()) << continued.status.error_message();
  EXPECT_LT(absl::Now() - killed, absl::Seconds(12)) << "free within one lease and a margin";
}

// A replica that lost its lease (stopped past it) cannot overwrite the state another replica
// moved the session on to: its final write is refused by the fencing check.
TEST_F(SessionRedisTest, AReplicaThatLostItsLeaseCannotOverwriteANewerState) {
  Replica a = StartReplica(redis_->url(), TinyModelDir());
  Replica b = StartReplica(redis_->url(), TinyModelDir());
  ASSERT_TRUE(a.stub && b.stub);
  const std::string handle = NewSession(a);
  ASSERT_FALSE(handle.empty());

  grpc::ClientContext context;
  auto reader = a.stub->Generate(&context, SessionTurn({7}, true, handle, 3000));
  v1::GenerateResponse message;
  ASSERT_TRUE(reader->Read(&message));
  a.process->Signal(SIGSTOP);  // A's stream and its lease renewals stand still
  StreamResult moved_on;
  EXPECT_TRUE(WaitFor(
      [&] {
        moved_on = Generate(*b.stub, SessionTurn({8}, true, handle, 2));
        return moved_on.status.ok();
      },
      absl::Seconds(30)))
      << moved_on.status.error_message();
  a.process->Signal(SIGCONT);
  while (reader->Read(&message)) {
  }
  const grpc::Status lost = reader->Finish();
  EXPECT_EQ(lost.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << lost.error_message();
  EXPECT_TRUE(absl::StrContains(lost.error_message(), "lost its")) << lost.error_message();
  // The session holds B's turn: continuing it once more on B gives what continuing B's state
  // on a single server gives.
  const StreamResult next_b = Generate(*b.stub, SessionTurn({9}, true, handle, 4));
  ASSERT_TRUE(next_b.status.ok()) << next_b.status.error_message();
  Replica single = StartReplica("", TinyModelDir());
  ASSERT_TRUE(single.stub);
  const StreamResult s1 = Generate(*single.stub, SessionTurn({5, 6}, true, "", 2));
  ASSERT_TRUE(s1.status.ok());
  const std::string single_handle = s1.finished->session_handle();
  ASSERT_TRUE(Generate(*single.stub, SessionTurn({8}, true, single_handle, 2)).status.ok());
  const StreamResult s3 = Generate(*single.stub, SessionTurn({9}, true, single_handle, 4));
  ASSERT_TRUE(s3.status.ok());
  EXPECT_EQ(next_b.ids, s3.ids);
}

// Scheduling noise a shared CI machine (2 cores, sanitizers) adds to one gap: well below the
// 2 s the store's timeout stalled every stream for, well above what a decode step takes.
constexpr absl::Duration kGapFloor = absl::Milliseconds(250);
constexpr int kKeepRequests = 8;

// Issue 58, fault 1: with Redis stopped by SIGSTOP (a hang or a partition), eight keep-session
// requests end while a plain stream runs on the same server. Their session writes wait on
// Redis off the engine thread, so the plain stream's largest gap between messages stays within
// 3x its median plus a floor; before, each write blocked the step loop for the 2 s timeout.
TEST_F(SessionRedisTest, AStoppedRedisStallsNoPlainStreamWhileKeepRequestsEnd) {
  std::string error;
  std::unique_ptr<ServerProcess> server =
      ServerProcess::Start({"--model=" SLOTSERVE_BUNDLED_MODEL_DIR, "--max-slots=16",
                            "--max-new-tokens-limit=200000", "--session-store=" + redis_->url()},
                           &error);
  ASSERT_NE(server, nullptr) << error;
  auto stub = v1::SlotServe::NewStub(server->ConnectedChannel());
  ASSERT_TRUE(Generate(*stub, SessionTurn({5, 6}, true, "", 2)).status.ok()) << "Redis is up";

  // The plain stream (the bundled model, slower than the tiny one): long enough to outlast the
  // keep requests' ends by seconds (TokensLasting's probe runs alone, so its estimate runs
  // short beside other requests: ask for plenty); each message's arrival.
  const uint32_t tokens = TokensLasting(*stub, absl::Seconds(15));
  std::vector<absl::Time> arrivals;
  grpc::Status plain_status;
  std::atomic<int> plain_messages{0};
  std::thread plain([&] {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
    auto reader = stub->Generate(&context, GreedyTextRequest("In the beginning", tokens));
    v1::GenerateResponse message;
    while (reader->Read(&message)) {
      arrivals.push_back(absl::Now());
      ++plain_messages;
    }
    plain_status = reader->Finish();
  });
  ASSERT_TRUE(WaitFor([&] { return plain_messages >= 50; }, absl::Seconds(30)));

  redis_->Signal(SIGSTOP);
  const absl::Time stopped = absl::Now();
  std::vector<StreamResult> kept(kKeepRequests);
  std::vector<std::thread> keepers;
  for (int i = 0; i < kKeepRequests; ++i) {
    keepers.emplace_back([&, i] {
      auto own = v1::SlotServe::NewStub(server->ConnectedChannel());
      kept[i] = Generate(*own, SessionTurn({7, 8 + i}, true, "", 30), absl::Seconds(90));
    });
  }
  plain.join();
  redis_->Signal(SIGCONT);
  for (std::thread& keeper : keepers) keeper.join();

  ASSERT_TRUE(plain_status.ok()) << plain_status.error_message();
  ASSERT_GT(arrivals.size(), 100u);
  // Else a stall of the step loop by a 2 s session write could not show in the stream.
  ASSERT_GT(arrivals.back() - stopped, absl::Milliseconds(2500)) << "the stream ended too soon";
  std::vector<absl::Duration> gaps;
  for (size_t i = 1; i < arrivals.size(); ++i) gaps.push_back(arrivals[i] - arrivals[i - 1]);
  std::vector<absl::Duration> sorted = gaps;
  std::sort(sorted.begin(), sorted.end());
  const absl::Duration median = sorted[sorted.size() / 2];
  const absl::Duration largest = sorted.back();
  EXPECT_LE(largest, 3 * median + kGapFloor) << "largest gap " << absl::FormatDuration(largest)
                                             << ", median " << absl::FormatDuration(median);
  for (int i = 0; i < kKeepRequests; ++i) {
    const grpc::Status& status = kept[i].status;
    if (status.ok()) continue;  // stored once Redis went on
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
    EXPECT_TRUE(absl::StrContains(status.error_message(), "session store"))
        << status.error_message();
  }
  EXPECT_TRUE(WaitFor(
      [&] {
        const v1::ModelInfo info = GetModelInfo(*stub);
        return info.slots_free() == info.slots_total() && info.requests_running() == 0;
      },
      absl::Seconds(60)));
}

}  // namespace
}  // namespace slotserve::testing
