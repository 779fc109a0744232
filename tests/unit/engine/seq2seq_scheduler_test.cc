// A request with a source through the scheduler, over FakeSeq2seqModel (whose translation
// copies the source, so the expected tokens are the source's ids then eos): the source is
// encoded once at admission before the decoder starts from decoder_start_id; a target prefix
// follows the start token; prefix states are not used for such requests; n > 1 copies the
// cross memory into every choice; an encoder failure ends only that request and returns its
// slot; a kept session continues without a source.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "engine/scheduler.h"
#include "tests/unit/engine/fake_seq2seq_model.h"
#include "tests/unit/engine/greedy_request.h"
#include "tests/unit/engine/recording_sink.h"

namespace slotserve::engine {
namespace {

using testing::FakeSeq2seqModel;
using testing::Greedy;
using testing::RecordingSink;

struct Seq2seqHarness {
  explicit Seq2seqHarness(SchedulerOptions options = {}) {
    auto model = std::make_unique<FakeSeq2seqModel>();
    counters = model->counters();
    options.max_slots = 3;
    absl::StatusOr<std::unique_ptr<Scheduler>> made =
        Scheduler::Create(std::move(model), nullptr, options);
    EXPECT_TRUE(made.ok()) << made.status();
    scheduler = *std::move(made);
    scheduler->Start();
  }
  ~Seq2seqHarness() {
    if (scheduler == nullptr) return;
    EXPECT_TRUE(scheduler->WaitIdle(absl::Now() + absl::Seconds(10)));
    EXPECT_EQ(scheduler->stats().slots_used, 0);  // every ending returned its slots
  }

  // Runs `request` to its end; its ids and Finished.
  std::pair<std::vector<int32_t>, Finished> Run(GenerationRequest request) {
    auto sink = std::make_shared<RecordingSink>();
    absl::StatusOr<RequestId> id = scheduler->Submit(std::move(request), sink);
    EXPECT_TRUE(id.ok()) << id.status();
    std::optional<Finished> finished = sink->WaitFinished();
    EXPECT_TRUE(finished.has_value());
    return {sink->ids(), finished.value_or(Finished{})};
  }

  std::shared_ptr<FakeSeq2seqModel::Counters> counters;
  std::unique_ptr<Scheduler> scheduler;
};

GenerationRequest Translate(std::vector<int32_t> source, std::vector<int32_t> prefix = {}) {
  GenerationRequest request = Greedy(std::move(prefix), 20);
  request.source_ids = std::move(source);
  return request;
}

TEST(Seq2seqSchedulerTest, TheSourceIsEncodedOnceAndTheDecoderStartsFromTheStartToken) {
  Seq2seqHarness harness;
  const auto [ids, finished] = harness.Run(Translate({5, 6, 7}));
  EXPECT_TRUE(finished.status.ok()) << finished.status;
  EXPECT_EQ(ids, (std::vector<int32_t>{5, 6, 7, FakeSeq2seqModel::kEos}));
  EXPECT_EQ(finished.reason, FinishReason::kEos);
  EXPECT_EQ(harness.counters->encodes, 1);
  EXPECT_EQ(harness.counters->first_decoder_token, FakeSeq2seqModel::kDecoderStart);
  EXPECT_EQ(finished.prompt_tokens, 1);  // decoder_start_id alone
}

TEST(Seq2seqSchedulerTest, ATargetPrefixFollowsTheStartToken) {
  Seq2seqHarness harness;
  // Two prefix tokens: the decoder has fed 3, so the next is source[2].
  const auto [ids, finished] = harness.Run(Translate({5, 6, 7, 8}, {20, 21}));
  EXPECT_EQ(ids, (std::vector<int32_t>{7, 8, FakeSeq2seqModel::kEos}));
  EXPECT_EQ(harness.counters->first_decoder_token, FakeSeq2seqModel::kDecoderStart);
  EXPECT_EQ(finished.prompt_tokens, 3);
}

TEST(Seq2seqSchedulerTest, PrefixStatesAreNotSharedBetweenSources) {
  SchedulerOptions options;
  options.prefix_block = 2;
  options.prefix_cache_bytes = 1 << 20;
  Seq2seqHarness harness(options);
  // The same decoder tokens [start, 20, 21, 22] after two different sources: a prefix hit
  // would bring the first source's cross memory into the second request.
  const auto first = harness.Run(Translate({5, 6, 7, 8, 9}, {20, 21, 22}));
  const auto second = harness.Run(Translate({10, 11, 12, 14, 15}, {20, 21, 22}));
  EXPECT_EQ(first.first, (std::vector<int32_t>{8, 9, FakeSeq2seqModel::kEos}));
  EXPECT_EQ(second.first, (std::vector<int32_t>{14, 15, FakeSeq2seqModel::kEos}));
}

TEST(Seq2seqSchedulerTest, EveryChoiceOfAForkCarriesTheCrossMemory) {
  Seq2seqHarness harness;
  GenerationRequest request = Translate({5, 6});
  request.n = 3;
  auto sink = std::make_shared<RecordingSink>();
  ASSERT_TRUE(harness.scheduler->Submit(std::move(request), sink).ok());
  ASSERT_TRUE(harness.scheduler->WaitIdle(absl::Now() + absl::Seconds(10)));
  std::map<int, std::vector<int32_t>> per_choice;
  for (const TokenChunk& chunk : sink->chunks()) {
    per_choice[chunk.choice_index].insert(per_choice[chunk.choice_index].end(), chunk.ids.begin(),
                                          chunk.ids.end());
  }
  ASSERT_EQ(per_choice.size(), 3u);
  for (const auto& [choice, ids] : per_choice) {
    EXPECT_EQ(ids, (std::vector<int32_t>{5, 6, FakeSeq2seqModel::kEos})) << "choice " << choice;
  }
  EXPECT_EQ(harness.counters->encodes, 1);  // encoded once, copied
}

TEST(Seq2seqSchedulerTest, AnEncoderFailureEndsOnlyThatRequestAndReturnsItsSlots) {
  Seq2seqHarness harness;
  GenerationRequest poisoned = Translate({5, FakeSeq2seqModel::kPoisonId});
  poisoned.n = 2;
  auto sink = std::make_shared<RecordingSink>();
  ASSERT_TRUE(harness.scheduler->Submit(std::move(poisoned), sink).ok());
  const std::optional<Finished> failed = sink->WaitFinished();
  ASSERT_TRUE(failed.has_value());
  EXPECT_EQ(failed->status.code(), absl::StatusCode::kInternal);
  EXPECT_NE(failed->status.message().find("encode"), std::string::npos) << failed->status;
  EXPECT_NE(failed->status.message().find("refuses id 13"), std::string::npos) << failed->status;
  // The server goes on: the next request gets a slot and translates.
  EXPECT_EQ(harness.Run(Translate({9})).first, (std::vector<int32_t>{9, FakeSeq2seqModel::kEos}));
}

TEST(Seq2seqSchedulerTest, AKeptSessionContinuesWithoutASource) {
  Seq2seqHarness harness;
  GenerationRequest first = Translate({5, 6, 7, 8});
  first.stopping.max_new_tokens = 2;
  first.session.keep = true;
  const auto [first_ids, first_end] = harness.Run(std::move(first));
  EXPECT_EQ(first_ids, (std::vector<int32_t>{5, 6}));
  ASSERT_FALSE(first_end.session_handle.empty());
  // The continuation feeds the pending token (6) and its prompt (20): the decoder has fed
  // start, 5, 6, 20 and goes on with source[3] from the kept cross memory.
  GenerationRequest next = Greedy({20}, 20);
  next.session.handle = first_end.session_handle;
  EXPECT_EQ(harness.Run(std::move(next)).first, (std::vector<int32_t>{8, FakeSeq2seqModel::kEos}));
  EXPECT_EQ(harness.counters->encodes, 1);
}

TEST(Seq2seqSchedulerTest, RefusalsComeFromSubmit) {
  Seq2seqHarness harness;
  auto sink = std::make_shared<RecordingSink>();
  absl::StatusOr<RequestId> no_source = harness.scheduler->Submit(Greedy({5}, 4), sink);
  EXPECT_EQ(no_source.status().code(), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<RequestId> too_long =
      harness.scheduler->Submit(Translate({3, 3, 3, 3, 3, 3, 3}), sink);
  EXPECT_EQ(too_long.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(too_long.status().message().find("at most 6 tokens, got 7"), std::string::npos);
}

}  // namespace
}  // namespace slotserve::engine
