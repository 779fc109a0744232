// The scheduler's bookkeeping over a scripted fake model: every kind of ending returns the
// slot, sinks hear exactly once, queue bound, drain, validation messages, batching limits.
#include "engine/scheduler.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tests/unit/engine/fake_language_model.h"
#include "tests/unit/engine/greedy_request.h"
#include "tests/unit/engine/recording_sink.h"
#include "tests/unit/engine/tiny_tokenizer.h"

namespace slotserve::engine {
namespace {

using testing::FakeLanguageModel;
using testing::RecordingSink;

class CountingObserver : public EngineObserver {
 public:
  void OnRequestAdmitted(absl::Duration) override { ++admitted; }
  void OnFirstToken(absl::Duration) override { ++first_tokens; }
  void OnInterTokenLatency(absl::Duration) override { ++later_tokens; }
  void OnRequestFinished(const Finished&) override { ++finished; }
  void OnStep(StepPhase phase, int, absl::Duration) override {
    ++(phase == StepPhase::kDecode ? decode_steps : prefill_steps);
  }
  std::atomic<int> admitted{0}, first_tokens{0}, later_tokens{0}, finished{0}, decode_steps{0},
      prefill_steps{0};
};

struct Harness {
  explicit Harness(SchedulerOptions options = {}, std::unique_ptr<FakeLanguageModel> fake = nullptr,
                   const Tokenizer* tokenizer = nullptr) {
    if (fake == nullptr) fake = std::make_unique<FakeLanguageModel>();
    model = fake.get();
    counters = fake->counters();
    absl::StatusOr<std::unique_ptr<Scheduler>> created =
        Scheduler::Create(std::move(fake), tokenizer, options, &observer);
    EXPECT_TRUE(created.ok()) << created.status();
    scheduler = std::move(*created);
  }

  // Submits and expects acceptance.
  std::pair<RequestId, std::shared_ptr<RecordingSink>> Submit(GenerationRequest request) {
    auto sink = std::make_shared<RecordingSink>();
    absl::StatusOr<RequestId> id = scheduler->Submit(std::move(request), sink);
    EXPECT_TRUE(id.ok()) << id.status();
    return {id.value_or(0), sink};
  }

  // Idle, with every slot back in the pool.
  void ExpectPoolFull() {
    EXPECT_TRUE(scheduler->WaitIdle(absl::Now() + absl::Seconds(20)));
    const SchedulerStats stats = scheduler->stats();
    EXPECT_EQ(stats.slots_used, 0);
    EXPECT_EQ(stats.running, 0);
    EXPECT_EQ(stats.queued, 0);
    EXPECT_EQ(stats.slots_total, scheduler->options().max_slots);
  }

  CountingObserver observer;  // outlives the scheduler (declared first)
  FakeLanguageModel* model = nullptr;
  std::shared_ptr<FakeLanguageModel::Counters> counters;
  std::unique_ptr<Scheduler> scheduler;
};

using testing::Greedy;

// eos (2) once `position` reaches 4, else 10.
std::unique_ptr<FakeLanguageModel> EosAtPositionFour() {
  return std::make_unique<FakeLanguageModel>(
      64, [](int32_t, int32_t position) { return position >= 4 ? 2 : 10; });
}

TEST(SchedulerTest, FinishesAtMaxNewTokensWithTheScriptedTokens) {
  Harness h;
  h.scheduler->Start();
  auto [id, sink] = h.Submit(Greedy({5}, 5));
  std::optional<Finished> finished = sink->WaitFinished();
  ASSERT_TRUE(finished);
  EXPECT_TRUE(finished->status.ok()) << finished->status;
  EXPECT_EQ(finished->reason, FinishReason::kLength);
  EXPECT_EQ(sink->ids(), (std::vector<int32_t>{6, 7, 8, 9, 10}));
  EXPECT_EQ(finished->prompt_tokens, 1);
  EXPECT_EQ(finished->generated_tokens, 5);
  EXPECT_GE(finished->timings.total, finished->timings.first_token);
  h.ExpectPoolFull();
  EXPECT_EQ(h.observer.admitted, 1);
  EXPECT_EQ(h.observer.first_tokens, 1);
  EXPECT_EQ(h.observer.later_tokens, 4);
  EXPECT_EQ(h.observer.finished, 1);
  EXPECT_EQ(sink->calls_after_finish(), 0);
  EXPECT_FALSE(h.scheduler->Cancel(id)) << "a finished request is no longer cancellable";
}

TEST(SchedulerTest, EndsAtEos) {
  Harness h({}, EosAtPositionFour());
  h.scheduler->Start();
  auto [id, sink] = h.Submit(Greedy({5, 6}, 50));
  std::optional<Finished> finished = sink->WaitFinished();
  ASSERT_TRUE(finished);
  EXPECT_EQ(finished->reason, FinishReason::kEos);
  EXPECT_EQ(sink->ids(), (std::vector<int32_t>{10, 10, 2}));
  h.ExpectPoolFull();
}

TEST(SchedulerTest, MinNewTokensMasksEos) {
  Harness h({}, EosAtPositionFour());
  h.scheduler->Start();
  GenerationRequest request = Greedy({5, 6}, 50);
  request.stopping.min_new_tokens = 5;
  auto [id, sink] = h.Submit(std::move(request));
  std::optional<Finished> finished = sink->WaitFinished();
  ASSERT_TRUE(finished);
  EXPECT_EQ(finished->reason, FinishReason::kEos);
  // The runner-up (3) replaces eos until five tokens exist.
  EXPECT_EQ(sink->ids(), (std::vector<int32_t>{10, 10, 3, 3, 3, 2}));
  h.ExpectPoolFull();
}

TEST(SchedulerTest, IgnoreEosKeepsGoing) {
  Harness h({}, EosAtPositionFour());
  h.scheduler->Start();
  GenerationRequest request = Greedy({5, 6}, 6);
  request.stopping.ignore_eos = true;
  auto [id, sink] = h.Submit(std::move(request));
  std::optional<Finished> finished = sink->WaitFinished();
  ASSERT_TRUE(finished);
  EXPECT_EQ(finished->reason, FinishReason::kLength);
  EXPECT_EQ(sink->ids(), (std::vector<int32_t>{10, 10, 2, 2, 2, 2}));
  h.ExpectPoolFull();
}

TEST(SchedulerTest, EndsAtAStopTokenId) {
  Harness h;
  h.scheduler->Start();
  GenerationRequest request = Greedy({5}, 50);
  request.stopping.stop_token_ids = {8, 40};
  auto [id, sink] = h.Submit(std::move(request));
  std::optional<Finished> finished = sink->WaitFinished();
  ASSERT_TRUE(finished);
  EXPECT_EQ(finished->reason, FinishReason::kStopToken);
  EXPECT_EQ(OutcomeLabel(*finished), "stop_token");
  EXPECT_EQ(sink->ids(), (std::vector<int32_t>{6, 7, 8}));
  h.ExpectPoolFull();
}

TEST(SchedulerTest, EndsTheModelsLongestContextWithLength) {
  auto fake = std::make_unique<FakeLanguageModel>();
  fake->set_max_positions(6);
  Harness h({}, std::move(fake));
  h.scheduler->Start();
  auto [id, sink] = h.Submit(Greedy({5, 6}, 100));
  std::optional<Finished> finished = sink->WaitFinished();
  ASSERT_TRUE(finished);
  EXPECT_EQ(finished->reason, FinishReason::kLength);
  EXPECT_EQ(finished->generated_tokens, 5);  // positions 0..5 used, the 5th token not fed
  h.ExpectPoolFull();
}

// A fake model that emits the tokens of `text` after a one-token prompt, then eos.
std::unique_ptr<FakeLanguageModel> Scripted(const Tokenizer& tokenizer, const std::string& text) {
  const std::vector<int32_t> tokens = *tokenizer.Encode(text);
  return std::make_unique<FakeLanguageModel>(
      tokenizer.piece_count(), [tokens](int32_t, int32_t position) {
        const size_t index = static_cast<size_t>(position - 1);
        return index < tokens.size() ? tokens[index] : 2;
      });
}

TEST(SchedulerTest, StopSequenceEndsWithTheTextBeforeIt) {
  std::string why;
  const Tokenizer* tokenizer = testing::TinyTokenizer(&why);
  ASSERT_NE(tokenizer, nullptr) << why;
  Harness h({}, Scripted(*tokenizer, "the fox will stop here and then more"), tokenizer);
  h.scheduler->Start();
  GenerationRequest request = Greedy({1}, 100);
  request.stopping.stop_sequences = {"stop here"};
  auto [id, sink] = h.Submit(std::move(request));
  std::optional<Finished> finished = sink->WaitFinished();
  ASSERT_TRUE(finished);
  EXPECT_EQ(finished->reason, FinishReason::kStopSequence);
  EXPECT_EQ(sink->text(), "the fox will ");
  h.ExpectPoolFull();
}

TEST(SchedulerTest, StreamedTextIsTheWholeDecodeWhenNothingStopsIt) {
  std::string why;
  const Tokenizer* tokenizer = testing::TinyTokenizer(&why);
  ASSERT_NE(tokenizer, nullptr) << why;
  const std::string text = "hello 🙂 world 日本";
  Harness h({}, Scripted(*tokenizer, text), tokenizer);
  h.scheduler->Start();
  GenerationRequest request = Greedy({1}, 100);
  request.stopping.stop_sequences = {"never matches"};
  auto [id, sink] = h.Submit(std::move(request));
  std::optional<Finished> finished = sink->WaitFinished();
  ASSERT_TRUE(finished);
  EXPECT_EQ(finished->reason, FinishReason::kEos);
  EXPECT_EQ(sink->text(), text);
  h.ExpectPoolFull();
}

TEST(SchedulerTest, CancelEndsARunningRequestAndReturnsItsSlot) {
  auto fake = std::make_unique<FakeLanguageModel>();
  fake->set_call_delay(absl::Milliseconds(2));
  Harness h({}, std::move(fake));
  h.scheduler->Start();
  auto [id, sink] = h.Submit(Greedy({5}, 4000));
  ASSERT_TRUE(sink->WaitTokens(3));
  EXPECT_TRUE(h.scheduler->Cancel(id));
  std::optional<Finished> finished = sink->WaitFinished();
  ASSERT_TRUE(finished);
  EXPECT_EQ(finished->status.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(finished->reason, FinishReason::kCancelled);
  EXPECT_EQ(OutcomeLabel(*finished), "cancelled");
  EXPECT_LT(finished->generated_tokens, 4000);
  h.ExpectPoolFull();
  EXPECT_FALSE(h.scheduler->Cancel(id));
}

// Issue 15, defect 1: the sink heard the end before the request left the books, so a client
// that asked right after its last message still saw its slot taken. The sink reads the stats
// and the observer's gauges from inside OnFinished, the earliest moment a client can act.
class StatsAtFinishSink : public RecordingSink {
 public:
  StatsAtFinishSink(const Scheduler* const* scheduler, const std::atomic<int>* gauge_running)
      : scheduler_(scheduler), gauge_running_(gauge_running) {}
  void OnFinished(const Finished& finished) override {
    stats_at_finish = (*scheduler_)->stats();
    gauge_running_at_finish = gauge_running_->load();
    RecordingSink::OnFinished(finished);
  }
  SchedulerStats stats_at_finish;
  int gauge_running_at_finish = -1;

 private:
  const Scheduler* const* scheduler_;
  const std::atomic<int>* gauge_running_;
};

class GaugeObserver : public EngineObserver {
 public:
  void OnStats(const SchedulerStats& stats) override { running = stats.running; }
  std::atomic<int> running{-1};
};

TEST(SchedulerTest, AFinishedRequestHasLeftTheBooksWhenItsSinkHearsTheEnd) {
  GaugeObserver gauges;
  absl::StatusOr<std::unique_ptr<Scheduler>> created =
      Scheduler::Create(std::make_unique<FakeLanguageModel>(), nullptr, {}, &gauges);
  ASSERT_TRUE(created.ok()) << created.status();
  const Scheduler* scheduler = created->get();
  (*created)->Start();
  for (const bool cancel : {false, true}) {
    SCOPED_TRACE(cancel ? "cancelled" : "max_new_tokens");
    auto sink = std::make_shared<StatsAtFinishSink>(&scheduler, &gauges.running);
    absl::StatusOr<RequestId> id = (*created)->Submit(Greedy({5}, cancel ? 4000 : 3), sink);
    ASSERT_TRUE(id.ok()) << id.status();
    if (cancel) {
      ASSERT_TRUE(sink->WaitTokens(2));
      (*created)->Cancel(*id);
    }
    ASSERT_TRUE(sink->WaitFinished());
    EXPECT_EQ(sink->stats_at_finish.running, 0);
    EXPECT_EQ(sink->stats_at_finish.slots_used, 0);
    EXPECT_EQ(sink->gauge_running_at_finish, 0);
  }
  (*created)->Stop();
}

TEST(SchedulerTest, CancelEndsAQueuedRequestWithoutRunningIt) {
  Harness h;
  auto [id, sink] = h.Submit(Greedy({5}, 10));
  EXPECT_TRUE(h.scheduler->Cancel(id));
  h.scheduler->Start();
  std::optional<Finished> finished = sink->WaitFinished();
  ASSERT_TRUE(finished);
  EXPECT_EQ(finished->status.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(finished->generated_tokens, 0);
  EXPECT_TRUE(sink->ids().empty());
  h.ExpectPoolFull();
}

TEST(SchedulerTest, DeadlineEndsTheRequestWithDeadlineExceeded) {
  auto fake = std::make_unique<FakeLanguageModel>();
  fake->set_call_delay(absl::Milliseconds(2));
  Harness h({}, std::move(fake));
  h.scheduler->Start();
  GenerationRequest request = Greedy({5}, 4000);
  request.deadline = absl::Now() + absl::Milliseconds(60);
  auto [id, sink] = h.Submit(std::move(request));
  std::optional<Finished> finished = sink->WaitFinished();
  ASSERT_TRUE(finished);
  EXPECT_EQ(finished->status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(OutcomeLabel(*finished), "deadline_exceeded");
  EXPECT_GT(finished->generated_tokens, 0);
  EXPECT_LT(finished->generated_tokens, 4000);
  h.ExpectPoolFull();
}

// gRPC cancels a call when its deadline passes; the request still ends as its deadline did.
TEST(SchedulerTest, ACancelAfterTheDeadlineEndsWithDeadlineExceeded) {
  Harness h;
  GenerationRequest request = Greedy({5}, 10);
  request.deadline = absl::Now() + absl::Milliseconds(20);
  auto [id, sink] = h.Submit(std::move(request));
  absl::SleepFor(absl::Milliseconds(40));
  EXPECT_TRUE(h.scheduler->Cancel(id));
  h.scheduler->Start();
  std::optional<Finished> finished = sink->WaitFinished();
  ASSERT_TRUE(finished);
  EXPECT_EQ(OutcomeLabel(*finished), "deadline_exceeded");
  h.ExpectPoolFull();
}

TEST(SchedulerTest, ARefusedRequestNeverTouchesThePoolOrTheSink) {
  Harness h;
  h.scheduler->Start();
  auto sink = std::make_shared<RecordingSink>();
  GenerationRequest request = Greedy({5}, 5);
  request.sampling.temperature = -1.0f;
  EXPECT_EQ(h.scheduler->Submit(request, sink).status().code(), absl::StatusCode::kInvalidArgument);
  h.ExpectPoolFull();
  EXPECT_FALSE(sink->WaitFinished(absl::Milliseconds(20)));
  EXPECT_TRUE(sink->chunks().empty());
}

TEST(SchedulerTest, ModelErrorsEndTheRequestAndReturnTheSlot) {
  auto fake = std::make_unique<FakeLanguageModel>();
  fake->set_fail_steps(true);
  Harness h({}, std::move(fake));
  h.scheduler->Start();
  auto [id, sink] = h.Submit(Greedy({5}, 10));
  std::optional<Finished> finished = sink->WaitFinished();
  ASSERT_TRUE(finished);
  EXPECT_EQ(finished->status.code(), absl::StatusCode::kInternal);
  EXPECT_NE(finished->status.message().find("decode step"), std::string::npos) << finished->status;
  EXPECT_EQ(OutcomeLabel(*finished), "error");
  EXPECT_EQ(sink->ids().size(), 1u);  // the first token came from the prefill
  h.ExpectPoolFull();
}

TEST(SchedulerTest, StopEndsRunningAndQueuedRequestsWithUnavailable) {
  auto fake = std::make_unique<FakeLanguageModel>();
  fake->set_call_delay(absl::Milliseconds(2));
  SchedulerOptions options;
  options.max_slots = 1;
  Harness h(options, std::move(fake));
  h.scheduler->Start();
  auto [running_id, running] = h.Submit(Greedy({5}, 4000));
  auto [queued_id, queued] = h.Submit(Greedy({5}, 4000));
  ASSERT_TRUE(running->WaitTokens(2));
  h.scheduler->Stop();
  for (const auto& sink : {running, queued}) {
    std::optional<Finished> finished = sink->WaitFinished(absl::ZeroDuration());
    ASSERT_TRUE(finished);
    EXPECT_EQ(finished->status.code(), absl::StatusCode::kUnavailable);
    EXPECT_EQ(OutcomeLabel(*finished), "shutdown");
    EXPECT_EQ(sink->calls_after_finish(), 0);
  }
  EXPECT_EQ(queued->WaitFinished()->generated_tokens, 0);
  h.ExpectPoolFull();
  EXPECT_EQ(h.scheduler->Submit(Greedy({5}, 5), std::make_shared<RecordingSink>()).status().code(),
            absl::StatusCode::kUnavailable);
  h.scheduler->Stop();  // idempotent
}

TEST(SchedulerTest, AFullQueueRefusesWithResourceExhausted) {
  SchedulerOptions options;
  options.max_queued = 2;
  Harness h(options);  // not started: everything stays queued
  h.Submit(Greedy({5}, 5));
  h.Submit(Greedy({5}, 5));
  absl::StatusOr<RequestId> third =
      h.scheduler->Submit(Greedy({5}, 5), std::make_shared<RecordingSink>());
  EXPECT_EQ(third.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(third.status().message().find("queue is full"), std::string::npos);
  EXPECT_EQ(h.scheduler->stats().queued, 2);
  h.scheduler->Start();
  h.ExpectPoolFull();
}

// A batch of prompts is queued whole or not at all: a refusal leaves nothing behind to run,
// count or hold a queue place.
TEST(SchedulerTest, SubmitAllQueuesEveryRequestOrNone) {
  SchedulerOptions options;
  options.max_queued = 3;
  Harness h(options);  // not started: everything stays queued
  h.Submit(Greedy({5}, 5));
  auto batch = [](int requests) {
    std::vector<Submission> submissions;
    for (int i = 0; i < requests; ++i) {
      submissions.push_back({Greedy({5, 6}, 5), std::make_shared<RecordingSink>()});
    }
    return submissions;
  };
  absl::StatusOr<std::vector<RequestId>> refused = h.scheduler->SubmitAll(batch(3));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("cannot take these 3 requests together (1 of 3"),
            std::string::npos)
      << refused.status();
  EXPECT_EQ(h.scheduler->stats().queued, 1);
  std::vector<Submission> one_bad = batch(2);
  one_bad[1].request.sampling.temperature = -1.0f;
  EXPECT_EQ(h.scheduler->SubmitAll(std::move(one_bad)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(h.scheduler->stats().queued, 1);
  absl::StatusOr<std::vector<RequestId>> taken = h.scheduler->SubmitAll(batch(2));
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_EQ(taken->size(), 2u);
  EXPECT_EQ(h.scheduler->stats().queued, 3);
  h.scheduler->Start();
  h.ExpectPoolFull();
}

// SubmitAll says which request it refused, and checks every one before it asks the queue: a
// bad request in a batch the queue could not take is refused as bad, by its index.
TEST(SchedulerTest, SubmitAllNamesTheRefusedRequestAndChecksBeforeTheQueue) {
  SchedulerOptions options;
  options.max_queued = 2;
  Harness h(options);  // not started: everything stays queued
  h.Submit(Greedy({5}, 5));
  std::vector<Submission> batch;
  for (int i = 0; i < 3; ++i) {
    batch.push_back({Greedy({5, 6}, 5), std::make_shared<RecordingSink>()});
  }
  batch[2].request.prompt_ids[1] = 1 << 20;  // outside any vocabulary
  size_t refused = 99;
  absl::StatusOr<std::vector<RequestId>> bad = h.scheduler->SubmitAll(std::move(batch), &refused);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
  EXPECT_NE(bad.status().message().find("prompt_ids[1] must be a token id"), std::string::npos)
      << bad.status();
  EXPECT_EQ(refused, 2u);
  std::vector<Submission> too_many;
  for (int i = 0; i < 2; ++i) {
    too_many.push_back({Greedy({5, 6}, 5), std::make_shared<RecordingSink>()});
  }
  refused = 99;
  EXPECT_EQ(h.scheduler->SubmitAll(std::move(too_many), &refused).status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(refused, 2u);  // the whole batch: submissions.size()
  EXPECT_EQ(h.scheduler->stats().queued, 1);
  h.scheduler->Start();
  h.ExpectPoolFull();
}

TEST(SchedulerTest, DrainRefusesNewRequestsAndLetsAcceptedOnesFinish) {
  auto fake = std::make_unique<FakeLanguageModel>();
  fake->set_call_delay(absl::Milliseconds(1));
  SchedulerOptions options;
  options.max_slots = 1;
  Harness h(options, std::move(fake));
  h.scheduler->Start();
  auto [a, first] = h.Submit(Greedy({5}, 20));
  auto [b, second] = h.Submit(Greedy({5}, 20));  // waits for the slot
  h.scheduler->BeginDrain();
  EXPECT_TRUE(h.scheduler->draining());
  EXPECT_EQ(h.scheduler->Submit(Greedy({5}, 5), std::make_shared<RecordingSink>()).status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_TRUE(h.scheduler->WaitIdle(absl::Now() + absl::Seconds(20)));
  for (const auto& sink : {first, second}) {
    std::optional<Finished> finished = sink->WaitFinished(absl::ZeroDuration());
    ASSERT_TRUE(finished);
    EXPECT_TRUE(finished->status.ok()) << finished->status;
    EXPECT_EQ(finished->generated_tokens, 20);
  }
  h.ExpectPoolFull();
}

TEST(SchedulerTest, ContinuousBatchingRunsManyRequestsThroughFewSlots) {
  SchedulerOptions options;
  options.max_slots = 3;
  Harness h(options);
  h.scheduler->Start();
  std::vector<std::shared_ptr<RecordingSink>> sinks;
  for (int i = 0; i < 10; ++i) sinks.push_back(h.Submit(Greedy({5 + i}, 3 + i)).second);
  for (int i = 0; i < 10; ++i) {
    std::optional<Finished> finished = sinks[i]->WaitFinished();
    ASSERT_TRUE(finished);
    EXPECT_EQ(finished->generated_tokens, 3 + i);
    EXPECT_EQ(sinks[i]->ids().front(), 6 + i);
  }
  EXPECT_LE(h.counters->largest_batch, 3);
  EXPECT_GE(h.counters->largest_batch, 2) << "requests should share decode steps";
  h.ExpectPoolFull();
}

TEST(SchedulerTest, LongPromptsArePrefilledInChunks) {
  SchedulerOptions options;
  options.prefill_chunk = 4;
  Harness h(options);
  h.scheduler->Start();
  auto [id, sink] = h.Submit(Greedy({3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 2));
  std::optional<Finished> finished = sink->WaitFinished();
  ASSERT_TRUE(finished);
  EXPECT_EQ(sink->ids(), (std::vector<int32_t>{13, 14}));
  EXPECT_EQ(h.counters->prefills, 3);  // 4 + 4 + 2
  EXPECT_EQ(h.counters->largest_prefill, 4);
  EXPECT_EQ(h.counters->prefill_tokens, 10);
  h.ExpectPoolFull();
}

TEST(SchedulerTest, PromptsProgressEvenWhenDecodingFillsTheTokenBudget) {
  auto fake = std::make_unique<FakeLanguageModel>();
  fake->set_call_delay(absl::Milliseconds(1));
  SchedulerOptions options;
  options.max_slots = 4;
  options.token_budget = 2;
  options.prefill_chunk = 8;
  Harness h(options, std::move(fake));
  h.scheduler->Start();
  std::vector<std::shared_ptr<RecordingSink>> sinks;
  for (int i = 0; i < 3; ++i) sinks.push_back(h.Submit(Greedy({5}, 200)).second);
  ASSERT_TRUE(sinks[0]->WaitTokens(2));
  auto [id, late] = h.Submit(Greedy(std::vector<int32_t>(30, 7), 3));
  std::optional<Finished> finished = late->WaitFinished();
  ASSERT_TRUE(finished);
  EXPECT_EQ(finished->generated_tokens, 3);
  h.ExpectPoolFull();
}

TEST(SchedulerTest, LogprobsComeWithEveryToken) {
  Harness h;
  h.scheduler->Start();
  GenerationRequest request = Greedy({5}, 4);
  request.logprobs.enabled = true;
  request.logprobs.top_n = 3;
  auto [id, sink] = h.Submit(std::move(request));
  ASSERT_TRUE(sink->WaitFinished());
  for (const TokenChunk& chunk : sink->chunks()) {
    ASSERT_EQ(chunk.logprobs.size(), chunk.ids.size());
    for (size_t i = 0; i < chunk.ids.size(); ++i) {
      EXPECT_EQ(chunk.logprobs[i].chosen.id, chunk.ids[i]);
      ASSERT_EQ(chunk.logprobs[i].top.size(), 3u);
      EXPECT_EQ(chunk.logprobs[i].top[0].id, chunk.ids[i]);  // greedy picks the top one
      EXPECT_LT(chunk.logprobs[i].chosen.logprob, 0.0f);
    }
  }
  h.ExpectPoolFull();
}

TEST(SchedulerTest, ReportsTheSeedItUsed) {
  Harness h;
  h.scheduler->Start();
  GenerationRequest seeded = Greedy({5}, 2);
  seeded.sampling.seed = 777;
  auto [a, with_seed] = h.Submit(seeded);
  auto [b, picked1] = h.Submit(Greedy({5}, 2));
  auto [c, picked2] = h.Submit(Greedy({5}, 2));
  EXPECT_EQ(with_seed->WaitFinished()->seed, 777u);
  EXPECT_NE(picked1->WaitFinished()->seed, picked2->WaitFinished()->seed);
  h.ExpectPoolFull();
}

// Submit runs ValidateGenerationRequest (its rules, field by field, are in
// request_validation_test.cc) and adds its own refusals; either reaches the caller at once,
// naming the field, and nothing is queued.
TEST(SchedulerTest, SubmitRefusalsReachTheCallerNamingTheField) {
  Harness h;
  struct Refusal {
    const char* name;
    std::function<void(GenerationRequest&)> spoil;
    absl::StatusCode code;
    const char* message_part;
  };
  const std::vector<Refusal> cases = {
      {"temperature", [](auto& r) { r.sampling.temperature = -1; },
       absl::StatusCode::kInvalidArgument,
       "sampling.temperature must be >= 0 (0 = greedy), got -1"},
      {"stop without tokenizer", [](auto& r) { r.stopping.stop_sequences = {"x"}; },
       absl::StatusCode::kFailedPrecondition, "stopping.stop_sequences need the model's"},
      {"deadline", [](auto& r) { r.deadline = absl::Now() - absl::Seconds(1); },
       absl::StatusCode::kDeadlineExceeded, "deadline passed"},
  };
  for (const Refusal& bad : cases) {
    GenerationRequest request = Greedy({5}, 10);
    bad.spoil(request);
    absl::StatusOr<RequestId> id =
        h.scheduler->Submit(std::move(request), std::make_shared<RecordingSink>());
    EXPECT_EQ(id.status().code(), bad.code) << bad.name << ": " << id.status();
    EXPECT_NE(id.status().message().find(bad.message_part), std::string::npos)
        << bad.name << ": " << id.status();
  }
  EXPECT_EQ(h.scheduler->stats().queued, 0);
}

TEST(SchedulerTest, CreateRefusesBadOptionsNamingTheField) {
  SchedulerOptions options;
  options.max_slots = 0;
  absl::StatusOr<std::unique_ptr<Scheduler>> created =
      Scheduler::Create(std::make_unique<FakeLanguageModel>(), nullptr, options);
  EXPECT_EQ(created.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(created.status().message().find("max_slots must be > 0, got 0"), std::string::npos);
}

TEST(SchedulerTest, CreateRefusesATokenizerLargerThanTheVocabulary) {
  std::string why;
  const Tokenizer* tokenizer = testing::TinyTokenizer(&why);
  ASSERT_NE(tokenizer, nullptr) << why;
  absl::StatusOr<std::unique_ptr<Scheduler>> created =
      Scheduler::Create(std::make_unique<FakeLanguageModel>(64), tokenizer, SchedulerOptions{});
  EXPECT_EQ(created.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(created.status().message().find("vocab_size is 64"), std::string::npos)
      << created.status();
}

}  // namespace
}  // namespace slotserve::engine
