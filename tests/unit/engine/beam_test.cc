// Beam search served by the scheduler on every golden model (each attention kind) on the real
// CPU backend, against a brute-force beam search written here: it recomputes every
// hypothesis's next-token distribution from scratch (a fresh slot, Prefill of prompt + ids), so
// the engine's forks, copy plans and batched steps are checked against states that never were
// copied. Also: width 1 of the search is greedy decoding, a beam runs beside other requests,
// and every ending (done, cancel, deadline) gives all its slots back.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/beam_search.h"
#include "engine/scheduler.h"
#include "models/language_model.h"
#include "tests/unit/engine/golden_scheduler.h"
#include "tests/unit/engine/greedy_request.h"
#include "tests/unit/engine/recording_sink.h"

namespace slotserve::engine {
namespace {

const std::vector<int32_t> kPrompt = {1, 7, 19, 33, 4, 8, 21, 40, 12};

struct ReferenceHypothesis {
  std::vector<int32_t> ids;
  double logprob_sum = 0.0;
  double score = 0.0;
  FinishReason reason = FinishReason::kLength;
};

// The model's next-token log-probabilities after `tokens`, from an empty state.
std::vector<double> FreshLogprobs(models::LanguageModel& model, models::StateArena& arena,
                                  const std::vector<int32_t>& tokens) {
  const int vocab = model.config().vocab_size;
  std::vector<float> logits(vocab);
  EXPECT_TRUE(arena.Reset(0).ok());
  EXPECT_TRUE(model.Prefill(arena, 0, tokens, models::LogitsWanted::kLastToken, logits).ok());
  double max_logit = -std::numeric_limits<double>::infinity();
  for (float logit : logits) max_logit = std::max<double>(max_logit, logit);
  double sum = 0.0;
  for (float logit : logits) sum += std::exp(logit - max_logit);
  std::vector<double> logprobs(vocab);
  for (int t = 0; t < vocab; ++t) logprobs[t] = logits[t] - max_logit - std::log(sum);
  return logprobs;
}

// Brute-force beam search with the rules of beam_search.h, every row computed from scratch.
std::vector<ReferenceHypothesis> ReferenceBeamSearch(const std::filesystem::path& dir,
                                                     const GenerationRequest& request) {
  auto model = models::LanguageModel::Load(dir, kernels::Backend::kCpu);
  EXPECT_TRUE(model.ok()) << model.status();
  auto arena = (*model)->AllocateStates(1);
  EXPECT_TRUE(arena.ok()) << arena.status();
  const int width = static_cast<int>(request.beam.width);
  const double penalty = request.beam.length_penalty;
  const int max_length = static_cast<int>(request.stopping.max_new_tokens);
  const int32_t eos = request.stopping.ignore_eos ? -1 : (*model)->config().eos_id;
  const std::vector<int32_t>& stops = request.stopping.stop_token_ids;
  auto score = [&](double sum, size_t length) {
    return sum / std::pow(static_cast<double>(length), penalty);
  };
  std::vector<ReferenceHypothesis> live(1), finished;
  while (!live.empty()) {
    struct Candidate {
      double sum;
      size_t parent;
      int32_t token;
    };
    std::vector<Candidate> candidates;
    for (size_t p = 0; p < live.size(); ++p) {
      std::vector<int32_t> sequence = request.prompt_ids;
      sequence.insert(sequence.end(), live[p].ids.begin(), live[p].ids.end());
      const std::vector<double> logprobs = FreshLogprobs(**model, **arena, sequence);
      for (int32_t t = 0; t < static_cast<int32_t>(logprobs.size()); ++t) {
        candidates.push_back({live[p].logprob_sum + logprobs[t], p, t});
      }
    }
    std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
      return a.sum != b.sum         ? a.sum > b.sum
             : a.parent != b.parent ? a.parent < b.parent
                                    : a.token < b.token;
    });
    candidates.resize(width - finished.size());
    std::vector<ReferenceHypothesis> next;
    for (const Candidate& c : candidates) {
      ReferenceHypothesis h{live[c.parent].ids, c.sum, 0.0, FinishReason::kLength};
      h.ids.push_back(c.token);
      const bool stop = std::find(stops.begin(), stops.end(), c.token) != stops.end();
      if (c.token == eos || stop || static_cast<int>(h.ids.size()) == max_length) {
        h.reason = c.token == eos ? FinishReason::kEos
                   : stop         ? FinishReason::kStopToken
                                  : FinishReason::kLength;
        h.score = score(h.logprob_sum, h.ids.size());
        finished.push_back(h);
      } else {
        next.push_back(h);
      }
    }
    live = std::move(next);
    std::vector<ReferenceHypothesis> ranked = finished;
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.score > b.score; });
    if (static_cast<int64_t>(ranked.size()) >= request.beam.n_best) {
      const double worst = ranked[request.beam.n_best - 1].score;
      const bool can_improve = std::any_of(live.begin(), live.end(), [&](const auto& h) {
        return (penalty > 0 ? score(h.logprob_sum, max_length)
                            : score(h.logprob_sum, h.ids.size() + 1)) > worst;
      });
      if (!can_improve) live.clear();
    }
    if (live.empty()) {
      ranked.resize(std::min<size_t>(ranked.size(), request.beam.n_best));
      return ranked;
    }
  }
  return {};
}

GenerationRequest Beam(int width, int n_best, double length_penalty, int max_new,
                       std::vector<int32_t> prompt = kPrompt) {
  GenerationRequest request = testing::Greedy(std::move(prompt), max_new);
  request.beam = {.width = width, .length_penalty = length_penalty, .n_best = n_best};
  return request;
}

std::unique_ptr<Scheduler> StartScheduler(const std::filesystem::path& dir, int slots,
                                          EngineObserver* observer = nullptr) {
  SchedulerOptions options;
  options.max_slots = slots;
  options.max_beam_width = 8;
  options.prefix_block = 4;  // prompts run in several chunks
  return testing::StartGoldenScheduler(dir, options, observer);
}

// The fewest slots in use seen while a request was running (engine thread writes, the test
// reads after the request ended).
class SlotsWhileRunning : public EngineObserver {
 public:
  void OnStats(const SchedulerStats& stats) override {
    std::lock_guard lock(mu_);
    if (stats.running > 0) fewest_ = std::min(fewest_, stats.slots_used);
  }
  int fewest_slots_while_running() const {
    std::lock_guard lock(mu_);
    return fewest_;
  }

 private:
  mutable std::mutex mu_;
  int fewest_ = std::numeric_limits<int>::max();
};

// Submits `request` and waits for its end (nullopt, with a failure, when refused or too slow);
// its sink in *sink.
std::optional<Finished> RunToEnd(Scheduler& scheduler, const GenerationRequest& request,
                                 std::shared_ptr<testing::RecordingSink>* sink) {
  *sink = std::make_shared<testing::RecordingSink>();
  if (absl::StatusOr<RequestId> id = scheduler.Submit(request, *sink); !id.ok()) {
    ADD_FAILURE() << id.status();
    return std::nullopt;
  }
  return (*sink)->WaitFinished();
}

void ExpectMatchesReference(const Finished& finished,
                            const std::vector<ReferenceHypothesis>& reference) {
  ASSERT_TRUE(finished.status.ok()) << finished.status;
  ASSERT_EQ(finished.hypotheses.size(), reference.size());
  for (size_t i = 0; i < reference.size(); ++i) {
    const BeamHypothesis& got = finished.hypotheses[i];
    EXPECT_EQ(got.ids, reference[i].ids) << "hypothesis " << i;
    EXPECT_NEAR(got.logprob_sum, reference[i].logprob_sum, 1e-3) << "hypothesis " << i;
    EXPECT_NEAR(got.score, reference[i].score, 1e-3) << "hypothesis " << i;
    EXPECT_EQ(got.reason, reference[i].reason) << "hypothesis " << i;
  }
  EXPECT_EQ(finished.reason, reference[0].reason);
  EXPECT_EQ(finished.generated_tokens, static_cast<int32_t>(reference[0].ids.size()));
}

class BeamTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = testing::GoldenModelDir(GetParam());
    if (!std::filesystem::exists(dir_ / "config.json")) GTEST_SKIP() << "no model at " << dir_;
  }
  std::filesystem::path dir_;
};

TEST_P(BeamTest, TheReferenceAtWidthOneIsTheSchedulersGreedyDecoding) {
  std::unique_ptr<Scheduler> scheduler = StartScheduler(dir_, 4);
  ASSERT_NE(scheduler, nullptr);
  GenerationRequest greedy = testing::Greedy(kPrompt, 8);
  greedy.stopping.ignore_eos = true;
  std::shared_ptr<testing::RecordingSink> sink;
  ASSERT_TRUE(RunToEnd(*scheduler, greedy, &sink).has_value());
  GenerationRequest one = Beam(1, 1, 0.0, 8);
  one.stopping.ignore_eos = true;
  const std::vector<ReferenceHypothesis> reference = ReferenceBeamSearch(dir_, one);
  ASSERT_EQ(reference.size(), 1u);
  EXPECT_EQ(reference[0].ids, sink->ids());
}

TEST_P(BeamTest, SearchAtWidthOneOverTheModelsRowsIsGreedyDecoding) {
  // The engine's search driven by hand over the model's steps (no scheduler): width 1 must
  // pick exactly the greedy tokens, eos ending included.
  std::unique_ptr<Scheduler> scheduler = StartScheduler(dir_, 4);
  ASSERT_NE(scheduler, nullptr);
  std::shared_ptr<testing::RecordingSink> sink;
  const std::optional<Finished> greedy = RunToEnd(*scheduler, testing::Greedy(kPrompt, 12), &sink);
  ASSERT_TRUE(greedy.has_value());

  auto model = models::LanguageModel::Load(dir_, kernels::Backend::kCpu);
  ASSERT_TRUE(model.ok());
  auto arena = (*model)->AllocateStates(1);
  ASSERT_TRUE(arena.ok());
  const int vocab = (*model)->config().vocab_size;
  BeamSearch search({.width = 1,
                     .n_best = 1,
                     .length_penalty = 0.0,
                     .max_length = 12,
                     .min_length = 0,
                     .eos_ids = {(*model)->config().eos_id},
                     .stop_token_ids = {}},
                    {0});
  std::vector<float> logits(vocab);
  ASSERT_TRUE(
      (*model)->Prefill(**arena, 0, kPrompt, models::LogitsWanted::kLastToken, logits).ok());
  std::vector<double> row(vocab);
  while (true) {
    double max_logit = *std::max_element(logits.begin(), logits.end());
    double sum = 0.0;
    for (float logit : logits) sum += std::exp(logit - max_logit);
    for (int t = 0; t < vocab; ++t) row[t] = logits[t] - max_logit - std::log(sum);
    search.Advance(row, vocab);
    if (search.done()) break;
    const int32_t slot = 0, token = search.live()[0].ids.back();
    ASSERT_TRUE((*model)->Step(**arena, {&slot, 1}, {&token, 1}, logits).ok());
  }
  ASSERT_EQ(search.Best().size(), 1u);
  EXPECT_EQ(search.Best()[0].ids, sink->ids());
  EXPECT_EQ(search.Best()[0].reason, greedy->reason);
}

TEST_P(BeamTest, WidthFourMatchesABruteForceSearchAndGivesEverySlotBack) {
  std::unique_ptr<Scheduler> scheduler = StartScheduler(dir_, 6);
  ASSERT_NE(scheduler, nullptr);
  GenerationRequest request = Beam(4, 4, 0.0, 6);
  request.stopping.ignore_eos = true;
  std::shared_ptr<testing::RecordingSink> sink;
  const std::optional<Finished> finished = RunToEnd(*scheduler, request, &sink);
  ASSERT_TRUE(finished.has_value());
  const std::vector<ReferenceHypothesis> reference = ReferenceBeamSearch(dir_, request);
  ExpectMatchesReference(*finished, reference);
  // One chunk: the best hypothesis, at the end.
  ASSERT_EQ(sink->chunks().size(), 1u);
  EXPECT_EQ(sink->ids(), reference[0].ids);
  // Not all four best are one hypothesis's prefixes: the search really branched.
  EXPECT_NE(finished->hypotheses[0].ids, finished->hypotheses[1].ids);
  EXPECT_TRUE(scheduler->WaitIdle(absl::Now() + absl::Seconds(20)));
  EXPECT_EQ(scheduler->stats().slots_used, 0);
}

TEST_P(BeamTest, EndingHypothesesAndALengthPenaltyMatchTheBruteForceSearch) {
  // Stop tokens taken from an unconstrained search's best, so hypotheses end early and their
  // slots go back mid-search; a length penalty ranks them.
  SlotsWhileRunning observer;
  std::unique_ptr<Scheduler> scheduler = StartScheduler(dir_, 6, &observer);
  ASSERT_NE(scheduler, nullptr);
  GenerationRequest probe = Beam(4, 1, 0.0, 6);
  probe.stopping.ignore_eos = true;
  const std::vector<ReferenceHypothesis> unconstrained = ReferenceBeamSearch(dir_, probe);
  ASSERT_FALSE(unconstrained.empty());
  GenerationRequest request = Beam(4, 4, 1.0, 6);
  request.stopping.stop_token_ids = {unconstrained[0].ids[1], unconstrained[0].ids[3]};
  std::shared_ptr<testing::RecordingSink> sink;
  const std::optional<Finished> finished = RunToEnd(*scheduler, request, &sink);
  ASSERT_TRUE(finished.has_value());
  ExpectMatchesReference(*finished, ReferenceBeamSearch(dir_, request));
  // A hypothesis ended early on a stop token (so its slot went back while the others ran).
  EXPECT_TRUE(std::any_of(finished->hypotheses.begin(), finished->hypotheses.end(),
                          [](const BeamHypothesis& h) {
                            return h.reason == FinishReason::kStopToken && h.ids.size() < 6;
                          }));
  EXPECT_LT(observer.fewest_slots_while_running(), 4) << "no slot came back mid-search";
  EXPECT_TRUE(scheduler->WaitIdle(absl::Now() + absl::Seconds(20)));
  EXPECT_EQ(scheduler->stats().slots_used, 0);
}

TEST_P(BeamTest, ABeamBesideOtherRequestsGivesWhatItGivesAlone) {
  std::unique_ptr<Scheduler> scheduler = StartScheduler(dir_, 8);
  ASSERT_NE(scheduler, nullptr);
  GenerationRequest beam = Beam(3, 3, 0.5, 6);
  beam.stopping.ignore_eos = true;
  GenerationRequest greedy = testing::Greedy({1, 5, 9, 30}, 10);
  auto alone = std::make_shared<testing::RecordingSink>();
  ASSERT_TRUE(scheduler->Submit(beam, alone).ok());
  ASSERT_TRUE(alone->WaitFinished().has_value());
  auto greedy_alone = std::make_shared<testing::RecordingSink>();
  ASSERT_TRUE(scheduler->Submit(greedy, greedy_alone).ok());
  ASSERT_TRUE(greedy_alone->WaitFinished().has_value());

  auto beam_sink = std::make_shared<testing::RecordingSink>();
  auto greedy_sink = std::make_shared<testing::RecordingSink>();
  auto other_beam_sink = std::make_shared<testing::RecordingSink>();
  ASSERT_TRUE(scheduler->Submit(greedy, greedy_sink).ok());
  ASSERT_TRUE(scheduler->Submit(beam, beam_sink).ok());
  ASSERT_TRUE(scheduler->Submit(Beam(4, 1, 0.0, 5), other_beam_sink).ok());
  const std::optional<Finished> together = beam_sink->WaitFinished();
  ASSERT_TRUE(together.has_value());
  ASSERT_TRUE(greedy_sink->WaitFinished().has_value());
  ASSERT_TRUE(other_beam_sink->WaitFinished().has_value());
  const std::optional<Finished> solo = alone->WaitFinished();
  ASSERT_EQ(together->hypotheses.size(), solo->hypotheses.size());
  for (size_t i = 0; i < solo->hypotheses.size(); ++i) {
    EXPECT_EQ(together->hypotheses[i].ids, solo->hypotheses[i].ids);
    EXPECT_NEAR(together->hypotheses[i].score, solo->hypotheses[i].score, 1e-4);
  }
  EXPECT_EQ(greedy_sink->ids(), greedy_alone->ids());
  EXPECT_TRUE(scheduler->WaitIdle(absl::Now() + absl::Seconds(20)));
  EXPECT_EQ(scheduler->stats().slots_used, 0);
}

TEST_P(BeamTest, CancelAndDeadlineGiveEverySlotBack) {
  if (GetParam() == "softmax") {
    GTEST_SKIP() << "the golden softmax model's 64-position context ends a beam too soon";
  }
  std::unique_ptr<Scheduler> scheduler = StartScheduler(dir_, 4);
  ASSERT_NE(scheduler, nullptr);
  EXPECT_EQ(scheduler->Submit(Beam(5, 1, 0.0, 8), std::make_shared<testing::RecordingSink>())
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument)
      << "a width above the pool's 4 slots";
  GenerationRequest forever = Beam(4, 2, 0.0, 4000);
  forever.stopping.ignore_eos = true;
  auto sink = std::make_shared<testing::RecordingSink>();
  absl::StatusOr<RequestId> id = scheduler->Submit(forever, sink);
  ASSERT_TRUE(id.ok());
  while (scheduler->stats().running == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(scheduler->stats().slots_used, 4);
  EXPECT_TRUE(scheduler->Cancel(*id));
  std::optional<Finished> finished = sink->WaitFinished();
  ASSERT_TRUE(finished.has_value());
  EXPECT_EQ(finished->status.code(), absl::StatusCode::kCancelled);
  EXPECT_TRUE(finished->hypotheses.empty());
  EXPECT_TRUE(sink->ids().empty()) << "beam tokens are not final before the search ends";
  EXPECT_TRUE(scheduler->WaitIdle(absl::Now() + absl::Seconds(20)));
  EXPECT_EQ(scheduler->stats().slots_used, 0);

  forever.deadline = absl::Now() + absl::Milliseconds(50);
  sink = std::make_shared<testing::RecordingSink>();
  ASSERT_TRUE(scheduler->Submit(forever, sink).ok());
  finished = sink->WaitFinished();
  ASSERT_TRUE(finished.has_value());
  EXPECT_EQ(finished->status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(scheduler->WaitIdle(absl::Now() + absl::Seconds(20)));
  EXPECT_EQ(scheduler->stats().slots_used, 0);
  // The pool is whole: a full-width beam still runs.
  sink = std::make_shared<testing::RecordingSink>();
  ASSERT_TRUE(scheduler->Submit(Beam(4, 1, 0.0, 3), sink).ok());
  finished = sink->WaitFinished();
  ASSERT_TRUE(finished.has_value());
  EXPECT_TRUE(finished->status.ok()) << finished->status;
}

TEST_P(BeamTest, StopEndsABeamWithItsSlotsBack) {
  if (GetParam() == "softmax") GTEST_SKIP() << "context too short for a running beam";
  std::unique_ptr<Scheduler> scheduler = StartScheduler(dir_, 4);
  ASSERT_NE(scheduler, nullptr);
  GenerationRequest forever = Beam(3, 1, 0.0, 4000);
  forever.stopping.ignore_eos = true;
  auto sink = std::make_shared<testing::RecordingSink>();
  ASSERT_TRUE(scheduler->Submit(forever, sink).ok());
  while (scheduler->stats().running == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  scheduler->Stop();
  const std::optional<Finished> finished = sink->WaitFinished();
  ASSERT_TRUE(finished.has_value());
  EXPECT_EQ(finished->status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(scheduler->stats().slots_used, 0);
}

TEST_P(BeamTest, ABeamWaitsForWidthFreeSlots) {
  if (GetParam() == "softmax") GTEST_SKIP() << "context too short for a running stream";
  std::unique_ptr<Scheduler> scheduler = StartScheduler(dir_, 4);
  ASSERT_NE(scheduler, nullptr);
  GenerationRequest forever = testing::Greedy({1, 5, 9}, 4000);
  forever.stopping.ignore_eos = true;
  auto stream = std::make_shared<testing::RecordingSink>();
  absl::StatusOr<RequestId> stream_id = scheduler->Submit(forever, stream);
  ASSERT_TRUE(stream_id.ok());
  ASSERT_TRUE(stream->WaitTokens(2));
  auto beam = std::make_shared<testing::RecordingSink>();
  ASSERT_TRUE(scheduler->Submit(Beam(4, 2, 0.0, 4), beam).ok());
  // One slot is held, so the width-4 beam stays queued, however many steps run.
  ASSERT_TRUE(stream->WaitTokens(40));
  EXPECT_EQ(scheduler->stats().queued, 1);
  EXPECT_FALSE(beam->WaitFinished(absl::ZeroDuration()).has_value());
  EXPECT_TRUE(scheduler->Cancel(*stream_id));
  const std::optional<Finished> finished = beam->WaitFinished();
  ASSERT_TRUE(finished.has_value());
  EXPECT_TRUE(finished->status.ok()) << finished->status;
  EXPECT_EQ(finished->hypotheses.size(), 2u);
  EXPECT_TRUE(scheduler->WaitIdle(absl::Now() + absl::Seconds(20)));
  EXPECT_EQ(scheduler->stats().slots_used, 0);
}

TEST_P(BeamTest, ManyBeamsAndStreamsSharingAFewSlotsAllEndAndLeaveThePoolWhole) {
  // 5 slots, 12 requests: beams of width 2..5 (some with stop tokens, so slots come back
  // mid-search) and greedy streams, a third of them cancelled at once. Every request ends; then
  // a beam as wide as the pool must still find every slot free in the pool itself.
  std::unique_ptr<Scheduler> scheduler = StartScheduler(dir_, 5);
  ASSERT_NE(scheduler, nullptr);
  std::vector<std::shared_ptr<testing::RecordingSink>> sinks;
  std::vector<RequestId> ids;
  for (int i = 0; i < 12; ++i) {
    GenerationRequest request = i % 3 == 2 ? testing::Greedy({1, 5, 9, 30}, 6)
                                           : Beam(2 + i % 4, 1 + i % 2, 0.5 * (i % 3), 5);
    if (i % 4 == 1) request.stopping.stop_token_ids = {3, 11, 17, 25, 40};
    sinks.push_back(std::make_shared<testing::RecordingSink>());
    absl::StatusOr<RequestId> id = scheduler->Submit(request, sinks.back());
    ASSERT_TRUE(id.ok()) << id.status();
    ids.push_back(*id);
  }
  for (size_t i = 0; i < ids.size(); i += 3) scheduler->Cancel(ids[i]);
  for (const auto& sink : sinks) ASSERT_TRUE(sink->WaitFinished().has_value());
  EXPECT_TRUE(scheduler->WaitIdle(absl::Now() + absl::Seconds(20)));
  EXPECT_EQ(scheduler->stats().slots_used, 0);
  std::shared_ptr<testing::RecordingSink> sink;
  const std::optional<Finished> full = RunToEnd(*scheduler, Beam(5, 5, 0.0, 3), &sink);
  ASSERT_TRUE(full.has_value());
  EXPECT_TRUE(full->status.ok()) << full->status;
  EXPECT_EQ(full->hypotheses.size(), 5u);
}

TEST_P(BeamTest, AOneTokenBeamEndsWithItsPromptAndGivesItsSlotsBack) {
  std::unique_ptr<Scheduler> scheduler = StartScheduler(dir_, 4);
  ASSERT_NE(scheduler, nullptr);
  GenerationRequest request = Beam(3, 3, 0.0, 1);
  request.stopping.ignore_eos = true;
  std::shared_ptr<testing::RecordingSink> sink;
  const std::optional<Finished> finished = RunToEnd(*scheduler, request, &sink);
  ASSERT_TRUE(finished.has_value());
  ExpectMatchesReference(*finished, ReferenceBeamSearch(dir_, request));
  ASSERT_EQ(finished->hypotheses.size(), 3u);
  for (const BeamHypothesis& h : finished->hypotheses) EXPECT_EQ(h.ids.size(), 1u);
  EXPECT_TRUE(scheduler->WaitIdle(absl::Now() + absl::Seconds(20)));
  EXPECT_EQ(scheduler->stats().slots_used, 0);
}

INSTANTIATE_TEST_SUITE_P(GoldenModels, BeamTest, testing::kGoldenKinds);

// The committed trained models (one per attention kind, models/trained): real distributions over
// a 4000-piece vocabulary; "." and ";" as stop tokens, so hypotheses end at different lengths.
class TrainedModelBeamTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TrainedModelBeamTest, MatchesABruteForceSearchWithStopTokenEndings) {
  const std::filesystem::path dir =
      std::filesystem::path(SLOTSERVE_SOURCE_DIR) / "models/trained" / GetParam();
  if (!std::filesystem::exists(dir / "config.json")) GTEST_SKIP() << "no model at " << dir;
  std::unique_ptr<Scheduler> scheduler = StartScheduler(dir, 6);
  ASSERT_NE(scheduler, nullptr);
  // "<s> And God said" in the models' shared tokenizer.
  GenerationRequest request = Beam(4, 4, 1.0, 40, {1, 266, 296, 297});
  request.stopping.stop_token_ids = {263, 271};  // "." and ";"
  std::shared_ptr<testing::RecordingSink> sink;
  const std::optional<Finished> finished = RunToEnd(*scheduler, request, &sink);
  ASSERT_TRUE(finished.has_value());
  ExpectMatchesReference(*finished, ReferenceBeamSearch(dir, request));
  EXPECT_TRUE(scheduler->WaitIdle(absl::Now() + absl::Seconds(20)));
  EXPECT_EQ(scheduler->stats().slots_used, 0);
}

INSTANTIATE_TEST_SUITE_P(TrainedModels, TrainedModelBeamTest,
                         ::testing::Values("kjv-abc-m16", "kjv-rfa-d32", "kjv-luna-l32",
                                           "kjv-softmax-c512"));

}  // namespace
}  // namespace slotserve::engine
