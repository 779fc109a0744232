// Scoring a prompt (LogprobOptions::prompt) on every golden model (each attention kind) on the
// real CPU backend, against the PyTorch reference's logits (tests/golden): the score of prompt
// token t + 1 is the reference's log-softmax after tokens 0..t, whether the prompt is fed in
// small chunks, forked into n choices, or cached as a prefix state by an earlier request.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "engine/scheduler.h"
#include "tests/golden/golden_data.h"
#include "tests/unit/engine/golden_scheduler.h"
#include "tests/unit/engine/recording_sink.h"

namespace slotserve::engine {
namespace {

// The reference's logits agree with the engine's within 1e-4 (golden_logits_test.cc).
constexpr double kTolerance = 2e-4;
constexpr int kTopN = 3;

std::vector<double> ReferenceLogSoftmax(std::span<const float> logits) {
  const double max_logit = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (float logit : logits) sum += std::exp(logit - max_logit);
  std::vector<double> out;
  for (float logit : logits) out.push_back(logit - max_logit - std::log(sum));
  return out;
}

GenerationRequest ScoringRequest(std::vector<int32_t> prompt, int n) {
  GenerationRequest request;
  request.prompt_ids = std::move(prompt);
  request.n = n;
  request.sampling.temperature = 0.0f;
  request.stopping.max_new_tokens = 2;
  request.stopping.ignore_eos = true;
  request.logprobs.enabled = true;
  request.logprobs.top_n = kTopN;
  request.logprobs.prompt = true;
  return request;
}

struct Case {
  std::string kind;
  int n;
};
void PrintTo(const Case& c, std::ostream* out) { *out << c.kind << " n=" << c.n; }

class PromptScoresGoldenTest : public ::testing::TestWithParam<Case> {};

TEST_P(PromptScoresGoldenTest, EachPromptTokenScoresAsTheReferenceAfterTheTokensBeforeIt) {
  const std::filesystem::path dir = testing::GoldenModelDir(GetParam().kind);
  if (!std::filesystem::exists(dir / "config.json")) GTEST_SKIP() << "no model at " << dir;
  absl::StatusOr<golden::GoldenData> golden = golden::LoadGoldenData(dir);
  ASSERT_TRUE(golden.ok()) << golden.status();
  const std::vector<int32_t>& prompt = golden->tokens;

  SchedulerOptions options;
  options.max_slots = 4;
  options.prefill_chunk = 7;  // the prompt's 40 tokens in six chunks
  options.prefix_block = 8;
  std::unique_ptr<Scheduler> scheduler = testing::StartGoldenScheduler(dir, options);
  ASSERT_NE(scheduler, nullptr);
  // An earlier request leaves the prompt's blocks in the prefix cache; scoring must not use them.
  GenerationRequest plain = ScoringRequest(prompt, 1);
  plain.logprobs = {};
  auto warm = std::make_shared<testing::RecordingSink>();
  ASSERT_TRUE(scheduler->Submit(plain, warm).ok());
  ASSERT_TRUE(warm->WaitFinished().has_value());

  auto sink = std::make_shared<testing::RecordingSink>();
  ASSERT_TRUE(scheduler->Submit(ScoringRequest(prompt, GetParam().n), sink).ok());
  ASSERT_TRUE(sink->WaitFinished().has_value());
  ASSERT_TRUE(scheduler->WaitIdle(absl::Now() + absl::Seconds(20)));
  EXPECT_EQ(scheduler->stats().slots_used, 0);

  const std::vector<TokenChunk> chunks = sink->chunks();
  const auto with_scores = std::find_if(chunks.begin(), chunks.end(), [](const TokenChunk& c) {
    return c.prompt_logprobs.has_value();
  });
  ASSERT_NE(with_scores, chunks.end());
  EXPECT_EQ(std::count_if(chunks.begin(), chunks.end(),
                          [](const TokenChunk& c) { return c.prompt_logprobs.has_value(); }),
            1);
  EXPECT_EQ(with_scores->choice_index, 0);
  EXPECT_EQ(std::count_if(chunks.begin(), with_scores,
                          [](const TokenChunk& c) { return !c.ids.empty(); }),
            0)
      << "the prompt's scores come before any choice's first token";

  const std::vector<GeneratedTokenLogprobs>& scores = *with_scores->prompt_logprobs;
  ASSERT_EQ(scores.size(), prompt.size() - 1);
  for (size_t t = 0; t + 1 < prompt.size(); ++t) {
    const std::vector<double> reference = ReferenceLogSoftmax(golden->Row(t));
    const int32_t next = prompt[t + 1];
    EXPECT_EQ(scores[t].chosen.id, next);
    EXPECT_NEAR(scores[t].chosen.logprob, reference[next], kTolerance) << "prompt token " << t + 1;
    std::vector<int32_t> ranked(reference.size());
    std::iota(ranked.begin(), ranked.end(), 0);
    std::stable_sort(ranked.begin(), ranked.end(),
                     [&](int32_t a, int32_t b) { return reference[a] > reference[b]; });
    ASSERT_EQ(scores[t].top.size(), static_cast<size_t>(kTopN));
    for (int k = 0; k < kTopN; ++k) {
      EXPECT_NEAR(scores[t].top[k].logprob, reference[ranked[k]], kTolerance)
          << "prompt token " << t + 1 << ", alternative " << k;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(GoldenModels, PromptScoresGoldenTest,
                         ::testing::Values(Case{"abc", 1}, Case{"abc", 3},
                                           Case{"rfa_gate_interleave", 1}, Case{"luna_softplus", 2},
                                           Case{"softmax", 1}, Case{"softmax", 2}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.kind + "_n" + std::to_string(info.param.n);
                         });

}  // namespace
}  // namespace slotserve::engine
