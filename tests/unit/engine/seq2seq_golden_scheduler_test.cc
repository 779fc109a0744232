// A request with a source through the scheduler on each golden encoder-decoder model
// (tests/golden/seq2seq, real CPU backend) gives the greedy tokens of running the model
// directly: Encode(source), Prefill(decoder_start_id), then argmax and Step. A fork (n = 2)
// gives both choices those tokens. Skipped while LanguageModel::Load cannot load a seq2seq
// model directory (the model is being built on its own branch).
#include <gtest/gtest.h>
#include <cmath>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "engine/scheduler.h"
#include "models/language_model.h"
#include "tests/unit/engine/greedy_request.h"
#include "tests/unit/engine/recording_sink.h"

namespace slotserve::engine {
namespace {

constexpr int kNewTokens = 12;
const std::vector<int32_t> kSource = {5, 17, 9, 23, 4, 11, 2};

std::filesystem::path Seq2seqDir(const std::string& name) {
  return std::filesystem::path(SLOTSERVE_SOURCE_DIR) / "tests/golden/seq2seq" / name;
}

// Whether a load failure only says that this build has no encoder-decoder model yet (the
// seq2seq config keys are unknown, or the directory checks out but cannot run): then the test
// skips; any other failure is a failure.
bool NotBuiltYet(const absl::Status& status) {
  return status.code() == absl::StatusCode::kUnimplemented ||
         absl::StrContains(status.message(), "unknown key");
}

// The model, or null when this build cannot load it as an encoder-decoder model (*why).
std::unique_ptr<models::LanguageModel> LoadSeq2seq(const std::filesystem::path& dir,
                                                   std::string* why) {
  absl::StatusOr<std::unique_ptr<models::LanguageModel>> model =
      models::LanguageModel::Load(dir, kernels::Backend::kCpu);
  if (!model.ok()) {
    EXPECT_TRUE(NotBuiltYet(model.status())) << model.status();
    *why = std::string(model.status().message());
    return nullptr;
  }
  EXPECT_NE((*model)->seq2seq(), nullptr) << dir << " loaded as a decoder-only model";
  if ((*model)->seq2seq() == nullptr) return nullptr;
  return *std::move(model);
}

int32_t Argmax(const std::vector<float>& logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

// Greedy tokens computed on the model directly, without the engine.
std::vector<int32_t> DirectGreedy(models::LanguageModel& model) {
  std::unique_ptr<models::StateArena> arena = *model.AllocateStates(1);
  std::vector<float> logits(model.config().vocab_size);
  EXPECT_TRUE(model.Encode(*arena, 0, kSource).ok());
  const int32_t start = model.seq2seq()->decoder_start_id;
  EXPECT_TRUE(model
                  .Prefill(*arena, 0, std::span<const int32_t>(&start, 1),
                           models::LogitsWanted::kLastToken, logits)
                  .ok());
  std::vector<int32_t> tokens;
  const int32_t slot = 0;
  while (static_cast<int>(tokens.size()) < kNewTokens) {
    tokens.push_back(Argmax(logits));
    if (static_cast<int>(tokens.size()) == kNewTokens) break;
    EXPECT_TRUE(model
                    .Step(*arena, std::span<const int32_t>(&slot, 1),
                          std::span<const int32_t>(&tokens.back(), 1), logits)
                    .ok());
  }
  return tokens;
}

// log_softmax of the logits after the decoder read [start] + prefix, recomputed from scratch
// (Encode, then one Prefill): no state is carried between hypotheses.
std::vector<double> FreshLogprobs(models::LanguageModel& model,
                                  const std::vector<int32_t>& prefix) {
  std::unique_ptr<models::StateArena> arena = *model.AllocateStates(1);
  EXPECT_TRUE(model.Encode(*arena, 0, kSource).ok());
  std::vector<int32_t> inputs = {model.seq2seq()->decoder_start_id};
  inputs.insert(inputs.end(), prefix.begin(), prefix.end());
  std::vector<float> logits(model.config().vocab_size);
  EXPECT_TRUE(model.Prefill(*arena, 0, inputs, models::LogitsWanted::kLastToken, logits).ok());
  const double max = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (const float logit : logits) sum += std::exp(logit - max);
  std::vector<double> logprobs(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) logprobs[i] = logits[i] - max - std::log(sum);
  return logprobs;
}

// A plain beam search of `width` over fixed-length hypotheses (eos ignored), every hypothesis
// scored from scratch: the best one's tokens.
std::vector<int32_t> BruteForceBeam(models::LanguageModel& model, int width, int length) {
  std::vector<std::pair<double, std::vector<int32_t>>> beams = {{0.0, {}}};
  for (int step = 0; step < length; ++step) {
    std::vector<std::pair<double, std::vector<int32_t>>> candidates;
    for (const auto& [score, ids] : beams) {
      const std::vector<double> logprobs = FreshLogprobs(model, ids);
      for (size_t token = 0; token < logprobs.size(); ++token) {
        std::vector<int32_t> extended = ids;
        extended.push_back(static_cast<int32_t>(token));
        candidates.emplace_back(score + logprobs[token], std::move(extended));
      }
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    candidates.resize(width);
    beams = std::move(candidates);
  }
  return beams.front().second;
}

class Seq2seqGoldenSchedulerTest : public ::testing::TestWithParam<std::string> {};

TEST_P(Seq2seqGoldenSchedulerTest, ARequestWithASourceGivesTheModelsGreedyTokens) {
  std::string why;
  std::unique_ptr<models::LanguageModel> direct = LoadSeq2seq(Seq2seqDir(GetParam()), &why);
  if (direct == nullptr) GTEST_SKIP() << GetParam() << " does not load as seq2seq: " << why;
  const std::vector<int32_t> expected = DirectGreedy(*direct);

  SchedulerOptions options;
  options.max_slots = 3;
  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler =
      Scheduler::Create(LoadSeq2seq(Seq2seqDir(GetParam()), &why), nullptr, options);
  ASSERT_TRUE(scheduler.ok()) << scheduler.status();
  (*scheduler)->Start();

  GenerationRequest request = testing::Greedy({}, kNewTokens);
  request.source_ids = kSource;
  request.stopping.ignore_eos = true;
  auto sink = std::make_shared<testing::RecordingSink>();
  ASSERT_TRUE((*scheduler)->Submit(request, sink).ok());
  ASSERT_TRUE(sink->WaitFinished().has_value());
  EXPECT_EQ(sink->ids(), expected);

  request.n = 2;
  auto fork_sink = std::make_shared<testing::RecordingSink>();
  ASSERT_TRUE((*scheduler)->Submit(request, fork_sink).ok());
  ASSERT_TRUE((*scheduler)->WaitIdle(absl::Now() + absl::Seconds(30)));
  std::map<int, std::vector<int32_t>> per_choice;
  for (const TokenChunk& chunk : fork_sink->chunks()) {
    per_choice[chunk.choice_index].insert(per_choice[chunk.choice_index].end(), chunk.ids.begin(),
                                          chunk.ids.end());
  }
  ASSERT_EQ(per_choice.size(), 2u);
  EXPECT_EQ(per_choice[0], expected);
  EXPECT_EQ(per_choice[1], expected);
  EXPECT_EQ((*scheduler)->stats().slots_used, 0);
}

// Beam search over an encoder-decoder model: the beams are forked slots, each carrying the
// request's cross memory; the best hypothesis equals a brute-force search that recomputes every
// hypothesis from the source, and every slot comes back.
TEST_P(Seq2seqGoldenSchedulerTest, BeamSearchOverASourceEqualsABruteForceSearch) {
  std::string why;
  std::unique_ptr<models::LanguageModel> direct = LoadSeq2seq(Seq2seqDir(GetParam()), &why);
  if (direct == nullptr) GTEST_SKIP() << GetParam() << " does not load as seq2seq: " << why;
  constexpr int kWidth = 3;
  constexpr int kLength = 6;
  const std::vector<int32_t> expected = BruteForceBeam(*direct, kWidth, kLength);

  SchedulerOptions options;
  options.max_slots = 4;
  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler =
      Scheduler::Create(LoadSeq2seq(Seq2seqDir(GetParam()), &why), nullptr, options);
  ASSERT_TRUE(scheduler.ok()) << scheduler.status();
  (*scheduler)->Start();
  GenerationRequest request = testing::Greedy({}, kLength);
  request.source_ids = kSource;
  request.stopping.ignore_eos = true;
  request.beam.width = kWidth;
  request.beam.n_best = kWidth;
  auto sink = std::make_shared<testing::RecordingSink>();
  ASSERT_TRUE((*scheduler)->Submit(request, sink).ok());
  const std::optional<Finished> finished = sink->WaitFinished();
  ASSERT_TRUE(finished.has_value());
  ASSERT_EQ(finished->hypotheses.size(), static_cast<size_t>(kWidth));
  EXPECT_EQ(finished->hypotheses.front().ids, expected);
  EXPECT_EQ(sink->ids(), expected);
  ASSERT_TRUE((*scheduler)->WaitIdle(absl::Now() + absl::Seconds(30)));
  EXPECT_EQ((*scheduler)->stats().slots_used, 0);
}

// With fewer cross memories than slots (--max-cross-memories), a beam's slots share one and a
// second request with a source waits for it: both finish with the tokens they get alone, and
// every slot and cross memory comes back (a third request is admitted at once afterwards).
TEST_P(Seq2seqGoldenSchedulerTest, OneCrossMemoryServesABeamAndThenTheNextRequest) {
  std::string why;
  std::unique_ptr<models::LanguageModel> direct = LoadSeq2seq(Seq2seqDir(GetParam()), &why);
  if (direct == nullptr) GTEST_SKIP() << GetParam() << " does not load as seq2seq: " << why;
  constexpr int kWidth = 3;
  constexpr int kLength = 6;
  const std::vector<int32_t> beam_expected = BruteForceBeam(*direct, kWidth, kLength);
  std::vector<int32_t> greedy_expected = DirectGreedy(*direct);

  SchedulerOptions options;
  options.max_slots = 4;
  options.max_cross_memories = 1;
  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler =
      Scheduler::Create(LoadSeq2seq(Seq2seqDir(GetParam()), &why), nullptr, options);
  ASSERT_TRUE(scheduler.ok()) << scheduler.status();
  GenerationRequest beam = testing::Greedy({}, kLength);
  beam.source_ids = kSource;
  beam.stopping.ignore_eos = true;
  beam.beam.width = kWidth;
  GenerationRequest greedy = testing::Greedy({}, kNewTokens);
  greedy.source_ids = kSource;
  greedy.stopping.ignore_eos = true;
  auto beam_sink = std::make_shared<testing::RecordingSink>();
  auto greedy_sink = std::make_shared<testing::RecordingSink>();
  // Both queued before the engine starts: the second has a free slot but no cross memory.
  ASSERT_TRUE((*scheduler)->Submit(beam, beam_sink).ok());
  ASSERT_TRUE((*scheduler)->Submit(greedy, greedy_sink).ok());
  (*scheduler)->Start();
  ASSERT_TRUE(beam_sink->WaitFinished().has_value());
  ASSERT_TRUE(greedy_sink->WaitFinished().has_value());
  EXPECT_EQ(beam_sink->ids(), beam_expected);
  EXPECT_EQ(greedy_sink->ids(), greedy_expected);
  auto again_sink = std::make_shared<testing::RecordingSink>();
  ASSERT_TRUE((*scheduler)->Submit(greedy, again_sink).ok());
  ASSERT_TRUE(again_sink->WaitFinished().has_value());
  EXPECT_EQ(again_sink->ids(), greedy_expected);
  ASSERT_TRUE((*scheduler)->WaitIdle(absl::Now() + absl::Seconds(30)));
  EXPECT_EQ((*scheduler)->stats().slots_used, 0);
}

TEST(Seq2seqSchedulerOptionsTest, MoreCrossMemoriesThanSlotsAreRefused) {
  SchedulerOptions options;
  options.max_slots = 4;
  options.max_cross_memories = 5;
  const absl::Status status = options.Validate();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("max_cross_memories must be in [0, max_slots = 4]"),
            std::string::npos)
      << status;
}

INSTANTIATE_TEST_SUITE_P(GoldenSeq2seq, Seq2seqGoldenSchedulerTest,
                         ::testing::Values("abc_abc", "rfa_abc", "luna_abc", "softmax_softmax",
                                           "srformer_abc", "convluna_conv_abc"));

}  // namespace
}  // namespace slotserve::engine
