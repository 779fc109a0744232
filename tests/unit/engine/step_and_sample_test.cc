// Selection on the model's device (LanguageModel::StepAndSample), the one decode path:
// RequestSampler's row/Accept split, what a request's row carries, StepAndSample's tokens
// against the host op on Step's logits, and whole scheduler runs on a golden CPU model with
// every decode through StepAndSample, requests with penalties, masks and logprobs included.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/active_request.h"
#include "engine/sampler.h"
#include "engine/scheduler.h"
#include "models/language_model.h"
#include "tests/unit/engine/host_selection.h"
#include "tests/unit/engine/recording_sink.h"

namespace slotserve::engine {
namespace {

std::filesystem::path GoldenModelDir(const std::string& name) {
  return std::filesystem::path(SLOTSERVE_SOURCE_DIR) / "tests/golden/models" / name;
}

std::vector<float> Logits(int vocab, int salt) {
  std::vector<float> logits(vocab);
  for (int i = 0; i < vocab; ++i) logits[i] = 0.1f * static_cast<float>((i * 37 + salt * 11) % 23);
  return logits;
}

TEST(RequestSamplerSplitTest, NextTokenThenAcceptFollowsTheStreamAndHistory) {
  SamplingOptions options;
  options.temperature = 0.9f;
  options.repetition_penalty = 1.3f;
  options.frequency_penalty = 0.4f;
  const std::vector<int32_t> prompt = {3, 4, 5};
  RequestSampler next(options, 42, prompt);
  RequestSampler split(options, 42, prompt);
  for (int i = 0; i < 30; ++i) {
    std::vector<float> a = Logits(50, i), b = a;
    const int32_t chosen = testing::SelectOnHost(b, split.NextToken({}, false));
    EXPECT_EQ(split.tokens_sampled(), i) << "NextToken must not advance the stream";
    split.Accept(chosen);
    EXPECT_EQ(testing::SelectAndAccept(next, a), chosen) << "token " << i;
    EXPECT_EQ(split.tokens_sampled(), next.tokens_sampled());
  }
  // Accepting a token chosen elsewhere feeds the penalties exactly as selecting it would have.
  next.Accept(7);
  split.Accept(7);
  std::vector<float> a = Logits(50, 99), b = a;
  EXPECT_EQ(testing::SelectAndAccept(next, a), testing::SelectAndAccept(split, b));
  EXPECT_EQ(a, b);
}

ActiveRequest MakeActive(GenerationRequest request) {
  StopLimits limits;
  limits.max_new_tokens = 50;
  limits.eos_ids = {2};
  limits.max_positions = 1000;
  return ActiveRequest(1, std::move(request), std::make_shared<testing::RecordingSink>(), 77,
                       limits, /*tokenizer=*/nullptr, absl::Now());
}

// Whether a row carries anything from the request's history or asks for its raw logits:
// what used to keep a request on the host, and now travels to the op with the row.
bool CarriesHistoryOrLogprobs(const models::TokenSampling& row) {
  return !row.penalised.empty() || !row.masked.empty() || row.want_raw_logits;
}

TEST(ActiveRequestTokenSamplingTest, TheRowCarriesTheOptionsDrawHistoryAndMasks) {
  GenerationRequest plain;
  plain.prompt_ids = {1, 5};
  plain.sampling.temperature = 0.7f;
  plain.sampling.top_k = 9;
  plain.sampling.top_p = 0.8f;
  plain.sampling.min_p = 0.05f;
  {
    ActiveRequest request = MakeActive(plain);
    const models::TokenSampling sampling = request.NextTokenSampling();
    EXPECT_FALSE(CarriesHistoryOrLogprobs(sampling));
    EXPECT_EQ(sampling.options.temperature, 0.7f);
    EXPECT_EQ(sampling.options.top_k, 9);
    EXPECT_EQ(sampling.options.top_p, 0.8f);
    EXPECT_EQ(sampling.options.min_p, 0.05f);
    EXPECT_EQ(sampling.seed, 77u);
    EXPECT_EQ(sampling.draw_index, 0u);
    request.AcceptToken(10, {});
    request.AcceptToken(11, {});
    EXPECT_EQ(request.NextTokenSampling().draw_index, 2u) << "draw i is token i";
    EXPECT_EQ(request.next_input(), 11);
  }
  for (auto change : std::vector<void (*)(GenerationRequest&)>{
           [](GenerationRequest& r) { r.sampling.repetition_penalty = 1.2f; },
           [](GenerationRequest& r) { r.sampling.presence_penalty = 0.5f; },
           [](GenerationRequest& r) { r.sampling.frequency_penalty = -0.5f; },
           [](GenerationRequest& r) { r.logprobs.enabled = true; }}) {
    GenerationRequest with_history = plain;
    change(with_history);
    EXPECT_TRUE(CarriesHistoryOrLogprobs(MakeActive(with_history).NextTokenSampling()));
  }
  // The penalised list is the prompt's ids, then counts what is generated.
  GenerationRequest penalised = plain;
  penalised.sampling.frequency_penalty = 0.5f;
  ActiveRequest with_counts = MakeActive(penalised);
  with_counts.AcceptToken(5, {});
  with_counts.AcceptToken(9, {});
  with_counts.AcceptToken(5, {});
  std::vector<std::pair<int32_t, int32_t>> counts;
  for (const kernels::PenalisedToken& token : with_counts.NextTokenSampling().penalised) {
    counts.emplace_back(token.id, token.generated);
  }
  EXPECT_EQ(counts, (std::vector<std::pair<int32_t, int32_t>>{{1, 0}, {5, 2}, {9, 1}}));
  // min_new_tokens masks eos until reached; then nothing is masked.
  GenerationRequest min_new = plain;
  min_new.stopping.min_new_tokens = 2;
  ActiveRequest request = MakeActive(min_new);
  EXPECT_TRUE(CarriesHistoryOrLogprobs(request.NextTokenSampling()));
  EXPECT_EQ(std::vector<int32_t>(request.NextTokenSampling().masked.begin(),
                                 request.NextTokenSampling().masked.end()),
            std::vector<int32_t>{2});
  request.AcceptToken(10, {});
  EXPECT_TRUE(CarriesHistoryOrLogprobs(request.NextTokenSampling()));
  request.AcceptToken(11, {});
  EXPECT_FALSE(CarriesHistoryOrLogprobs(request.NextTokenSampling()));
  // Nothing to mask (eos ignored, no stop ids): nothing masked from the start.
  min_new.stopping.ignore_eos = true;
  EXPECT_FALSE(CarriesHistoryOrLogprobs(MakeActive(min_new).NextTokenSampling()));
}

// StepAndSample's tokens on the cpu model are the host op's on Step's logits (draw
// UniformDraw(seed, draw_index)) for greedy, temperature, top-k, top-p and min-p rows.
TEST(StepAndSampleVersusHostSamplerTest, TokensEqualTheHostOpOnStepLogits) {
  const std::filesystem::path dir = GoldenModelDir("abc");
  if (!std::filesystem::exists(dir / "config.json")) GTEST_SKIP() << "no model at " << dir;
  auto model = models::LanguageModel::Load(dir, kernels::Backend::kCpu);
  ASSERT_TRUE(model.ok()) << model.status();
  const int vocab = (*model)->config().vocab_size;
  auto stepped = (*model)->AllocateStates(8);
  auto sampled = (*model)->AllocateStates(8);
  ASSERT_TRUE(stepped.ok() && sampled.ok());
  const std::vector<int32_t> slots = {6, 1, 4, 3, 0, 7};
  std::vector<float> prefill_logits(vocab);
  for (int32_t slot : slots) {
    const std::vector<int32_t> prompt = {1, (slot * 9 + 4) % vocab};
    for (auto* states : {&*stepped, &*sampled}) {
      ASSERT_TRUE(
          (*model)
              ->Prefill(**states, slot, prompt, models::LogitsWanted::kLastToken, prefill_logits)
              .ok());
    }
  }
  std::vector<SamplingOptions> options(slots.size());
  options[0].temperature = 0.0f;
  options[1].temperature = 1.2f;
  options[2].top_k = 5;
  options[3].top_p = 0.7f;
  options[4].min_p = 0.15f;
  options[5].temperature = 0.8f;
  options[5].top_k = 12;
  options[5].top_p = 0.9f;
  options[5].min_p = 0.02f;
  std::vector<int32_t> inputs = {3, 8, 13, 21, 34, 55 % vocab};
  for (int step = 0; step < 6; ++step) {
    std::vector<models::TokenSampling> sampling;
    for (size_t i = 0; i < slots.size(); ++i) {
      sampling.push_back({.options = options[i],
                          .seed = 1000 + i,
                          .draw_index = static_cast<uint64_t>(step * 3 + i)});
    }
    std::vector<float> logits(slots.size() * vocab);
    ASSERT_TRUE((*model)->Step(**stepped, slots, inputs, logits).ok());
    std::vector<int32_t> got(slots.size(), -1);
    ASSERT_TRUE((*model)->StepAndSample(**sampled, slots, inputs, sampling, got, {}).ok());
    for (size_t i = 0; i < slots.size(); ++i) {
      const std::span<const float> row(logits.data() + i * vocab, vocab);
      EXPECT_EQ(got[i],
                testing::SelectOnHost(row, options[i], sampling[i].seed, sampling[i].draw_index))
          << "row " << i << " step " << step;
    }
    inputs = got;
  }
}

// Forwards to a real model and counts which decode entry point the scheduler used.
class CountingModel : public models::LanguageModel {
 public:
  struct Counts {
    std::atomic<int> steps{0};
    std::atomic<int> sampled_steps{0};
    std::atomic<int> sampled_prefills{0};
  };
  explicit CountingModel(std::unique_ptr<models::LanguageModel> model) : model_(std::move(model)) {}
  std::shared_ptr<Counts> counts() const { return counts_; }

  const models::ModelConfig& config() const override { return model_->config(); }
  kernels::Backend backend() const override { return model_->backend(); }
  int64_t state_bytes_per_request() const override { return model_->state_bytes_per_request(); }
  int32_t max_positions() const override { return model_->max_positions(); }
  absl::StatusOr<std::unique_ptr<models::StateArena>> AllocateStates(int n) const override {
    return model_->AllocateStates(n);
  }
  absl::Status Prefill(models::StateArena& states, int slot, std::span<const int32_t> tokens,
                       models::LogitsWanted wanted, std::span<float> logits) override {
    return model_->Prefill(states, slot, tokens, wanted, logits);
  }
  absl::Status Step(models::StateArena& states, std::span<const int32_t> slots,
                    std::span<const int32_t> tokens, std::span<float> logits) override {
    ++counts_->steps;
    return model_->Step(states, slots, tokens, logits);
  }
  absl::Status StepAndSample(models::StateArena& states, std::span<const int32_t> slots,
                             std::span<const int32_t> tokens,
                             std::span<const models::TokenSampling> sampling,
                             std::span<int32_t> out_tokens, std::span<float> raw_logits) override {
    ++counts_->sampled_steps;
    return model_->StepAndSample(states, slots, tokens, sampling, out_tokens, raw_logits);
  }
  absl::StatusOr<int32_t> PrefillAndSample(models::StateArena& states, int slot,
                                           std::span<const int32_t> tokens,
                                           const models::TokenSampling& sampling,
                                           std::span<float> raw_logits) override {
    ++counts_->sampled_prefills;
    return model_->PrefillAndSample(states, slot, tokens, sampling, raw_logits);
  }

 private:
  std::unique_ptr<models::LanguageModel> model_;
  std::shared_ptr<Counts> counts_ = std::make_shared<Counts>();
};

struct RunResult {
  std::vector<std::vector<int32_t>> ids;  // per request, in submission order
  std::vector<std::vector<TokenChunk>> chunks;
  int steps = 0;
  int sampled_steps = 0;
  int sampled_prefills = 0;
};

// Runs `requests` concurrently (all submitted before the engine starts) to the end.
RunResult RunAll(const std::string& variant, const std::vector<GenerationRequest>& requests) {
  RunResult result;
  auto loaded = models::LanguageModel::Load(GoldenModelDir(variant), kernels::Backend::kCpu);
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  if (!loaded.ok()) return result;
  auto model = std::make_unique<CountingModel>(*std::move(loaded));
  const std::shared_ptr<CountingModel::Counts> counts = model->counts();
  SchedulerOptions options;
  options.max_slots = 16;
  options.prefill_chunk = 8;
  auto scheduler = Scheduler::Create(std::move(model), nullptr, options);
  EXPECT_TRUE(scheduler.ok()) << scheduler.status();
  if (!scheduler.ok()) return result;
  std::vector<std::shared_ptr<testing::RecordingSink>> sinks;
  for (const GenerationRequest& request : requests) {
    sinks.push_back(std::make_shared<testing::RecordingSink>());
    EXPECT_TRUE((*scheduler)->Submit(request, sinks.back()).ok());
  }
  (*scheduler)->Start();
  for (const auto& sink : sinks) {
    std::optional<Finished> finished = sink->WaitFinished();
    EXPECT_TRUE(finished && finished->status.ok());
    result.ids.push_back(sink->ids());
    result.chunks.push_back(sink->chunks());
  }
  EXPECT_TRUE((*scheduler)->WaitIdle(absl::Now() + absl::Seconds(20)));
  EXPECT_EQ((*scheduler)->stats().slots_used, 0) << "every slot is back in the pool";
  result.steps = counts->steps;
  result.sampled_steps = counts->sampled_steps;
  result.sampled_prefills = counts->sampled_prefills;
  return result;
}

// Seeded and greedy requests of every sampling kind, of different lengths, so the batch shrinks
// as they finish; none needs the host logits.
std::vector<GenerationRequest> DeviceFriendlyRequests() {
  std::vector<GenerationRequest> requests;
  for (int i = 0; i < 10; ++i) {
    GenerationRequest request;
    for (int t = 0; t < 1 + i % 5; ++t) request.prompt_ids.push_back(3 + (i * 13 + t * 7) % 50);
    SamplingOptions& s = request.sampling;
    s.seed = 500 + i;
    switch (i % 5) {
      case 0:
        s.temperature = 0.0f;
        break;
      case 1:
        s.temperature = 1.1f;
        break;
      case 2:
        s.top_k = 6;
        break;
      case 3:
        s.top_p = 0.75f;
        break;
      case 4:
        s.temperature = 0.9f;
        s.min_p = 0.1f;
        break;
    }
    request.stopping.max_new_tokens = 6 + 3 * i;
    request.stopping.ignore_eos = i % 2 == 0;
    requests.push_back(std::move(request));
  }
  return requests;
}

class SchedulerStepAndSampleTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(GoldenModelDir(GetParam()) / "config.json")) {
      GTEST_SKIP() << "no golden model " << GetParam();
    }
  }
};

TEST_P(SchedulerStepAndSampleTest, EveryTokenComesFromTheSelectionOpAndRunsRepeat) {
  const std::vector<GenerationRequest> requests = DeviceFriendlyRequests();
  const RunResult first = RunAll(GetParam(), requests);
  const RunResult again = RunAll(GetParam(), requests);
  ASSERT_EQ(first.ids.size(), requests.size());
  EXPECT_EQ(again.ids, first.ids) << "seeded and greedy requests repeat their tokens";
  for (size_t i = 0; i < requests.size(); ++i) EXPECT_FALSE(first.ids[i].empty()) << i;
  EXPECT_EQ(first.steps, 0) << "no decode step bypasses the selection op";
  EXPECT_GT(first.sampled_steps, 0);
  EXPECT_EQ(first.sampled_prefills, static_cast<int>(requests.size()))
      << "every first token comes from PrefillAndSample";
}

TEST_P(SchedulerStepAndSampleTest, RequestsWithPenaltiesMasksAndLogprobsShareTheOneDecodePath) {
  std::vector<GenerationRequest> requests = DeviceFriendlyRequests();
  GenerationRequest logprobs = requests[1];
  logprobs.logprobs.enabled = true;
  logprobs.logprobs.top_n = 2;
  logprobs.stopping.max_new_tokens = 8;
  GenerationRequest penalised = requests[3];
  penalised.sampling.repetition_penalty = 1.3f;
  penalised.stopping.max_new_tokens = 12;
  GenerationRequest min_new = requests[2];
  min_new.stopping.ignore_eos = false;
  min_new.stopping.min_new_tokens = 4;  // eos masked for its first 4 tokens
  requests.push_back(logprobs);
  requests.push_back(penalised);
  requests.push_back(min_new);

  const RunResult on = RunAll(GetParam(), requests);
  ASSERT_EQ(on.ids.size(), requests.size());
  EXPECT_EQ(on.steps, 0) << "batches with the logprobs/penalty request use StepAndSample too";
  EXPECT_GT(on.sampled_steps, 0);
  // The logprobs request gets one logprob entry per token, and asking for them changes nothing
  // about which tokens are picked.
  const size_t logprobs_index = requests.size() - 3;
  size_t entries = 0;
  for (const TokenChunk& chunk : on.chunks[logprobs_index]) entries += chunk.logprobs.size();
  EXPECT_EQ(entries, on.ids[logprobs_index].size());
  std::vector<GenerationRequest> without = requests;
  without[logprobs_index].logprobs = {};
  EXPECT_EQ(RunAll(GetParam(), without).ids, on.ids);
}

INSTANTIATE_TEST_SUITE_P(GoldenModels, SchedulerStepAndSampleTest,
                         ::testing::Values("abc", "softmax"));

}  // namespace
}  // namespace slotserve::engine
