// Sampling on the model's device (LanguageModel::StepAndSample) against the host sampler:
// the mode flag, which requests may be sampled on the device, RequestSampler's Choose/Accept
// split, StepAndSample's tokens against SampleToken on Step's logits, and whole scheduler runs
// on a golden CPU model giving the same token streams with device sampling forced on and off.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/active_request.h"
#include "engine/device_sampling.h"
#include "engine/sampler.h"
#include "engine/scheduler.h"
#include "kernels/counter_rng.h"
#include "models/language_model.h"
#include "tests/unit/engine/recording_sink.h"

namespace slotserve::engine {
namespace {

std::filesystem::path GoldenModelDir(const std::string& name) {
  return std::filesystem::path(SLOTSERVE_SOURCE_DIR) / "tests/golden/models" / name;
}

TEST(DeviceSamplingModeTest, ParsesTheFlagSpellingsAndRefusesOthers) {
  EXPECT_EQ(*ParseDeviceSampling("auto"), DeviceSampling::kAuto);
  EXPECT_EQ(*ParseDeviceSampling("on"), DeviceSampling::kAlways);
  EXPECT_EQ(*ParseDeviceSampling("off"), DeviceSampling::kNever);
  for (const char* bad : {"", "yes", "ON", "cuda"}) {
    const absl::StatusOr<DeviceSampling> parsed = ParseDeviceSampling(bad);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(parsed.status().message().find("auto"), std::string::npos) << parsed.status();
  }
  for (DeviceSampling mode :
       {DeviceSampling::kAuto, DeviceSampling::kAlways, DeviceSampling::kNever}) {
    EXPECT_EQ(*ParseDeviceSampling(DeviceSamplingName(mode)), mode);
  }
}

TEST(DeviceSamplingModeTest, AutoIsOnForCudaOnly) {
  using kernels::Backend;
  EXPECT_TRUE(SamplesOnDevice(DeviceSampling::kAuto, Backend::kCuda));
  EXPECT_FALSE(SamplesOnDevice(DeviceSampling::kAuto, Backend::kCpu));
  EXPECT_FALSE(SamplesOnDevice(DeviceSampling::kAuto, Backend::kReference));
  EXPECT_TRUE(SamplesOnDevice(DeviceSampling::kAlways, Backend::kCpu));
  EXPECT_FALSE(SamplesOnDevice(DeviceSampling::kNever, Backend::kCuda));
}

std::vector<float> Logits(int vocab, int salt) {
  std::vector<float> logits(vocab);
  for (int i = 0; i < vocab; ++i) logits[i] = 0.1f * static_cast<float>((i * 37 + salt * 11) % 23);
  return logits;
}

TEST(RequestSamplerSplitTest, ChooseThenAcceptFollowsNextStreamAndHistory) {
  SamplingOptions options;
  options.temperature = 0.9f;
  options.repetition_penalty = 1.3f;
  options.frequency_penalty = 0.4f;
  const std::vector<int32_t> prompt = {3, 4, 5};
  RequestSampler next(options, 42, prompt);
  RequestSampler split(options, 42, prompt);
  for (int i = 0; i < 30; ++i) {
    std::vector<float> a = Logits(50, i), b = a;
    const int32_t chosen = split.Choose(b, {});
    EXPECT_EQ(split.tokens_sampled(), i) << "Choose must not advance the stream";
    split.Accept(chosen);
    EXPECT_EQ(next.Next(a, {}), chosen) << "token " << i;
    EXPECT_EQ(split.tokens_sampled(), next.tokens_sampled());
  }
  // Accepting a token chosen elsewhere feeds the penalties exactly as Next would have.
  next.Accept(7);
  split.Accept(7);
  std::vector<float> a = Logits(50, 99), b = a;
  EXPECT_EQ(next.Next(a, {}), split.Next(b, {}));
  EXPECT_EQ(a, b);
}

ActiveRequest MakeActive(GenerationRequest request) {
  StopLimits limits;
  limits.max_new_tokens = 50;
  limits.eos_id = 2;
  limits.max_positions = 1000;
  return ActiveRequest(1, std::move(request), std::make_shared<testing::RecordingSink>(), 77,
                       limits, /*tokenizer=*/nullptr, absl::Now());
}

TEST(ActiveRequestDeviceSamplingTest, OnlyRequestsThatNeedNoHostLogitsQualify) {
  GenerationRequest plain;
  plain.prompt_ids = {1, 5};
  plain.sampling.temperature = 0.7f;
  plain.sampling.top_k = 9;
  plain.sampling.top_p = 0.8f;
  plain.sampling.min_p = 0.05f;
  {
    ActiveRequest request = MakeActive(plain);
    std::optional<models::TokenSampling> sampling = request.DeviceSampling();
    ASSERT_TRUE(sampling);
    EXPECT_EQ(sampling->temperature, 0.7f);
    EXPECT_EQ(sampling->top_k, 9);
    EXPECT_EQ(sampling->top_p, 0.8f);
    EXPECT_EQ(sampling->min_p, 0.05f);
    EXPECT_EQ(sampling->seed, 77u);
    EXPECT_EQ(sampling->draw_index, 0u);
    request.AcceptSampled(10);
    request.AcceptSampled(11);
    EXPECT_EQ(request.DeviceSampling()->draw_index, 2u) << "draw i is token i";
    EXPECT_EQ(request.next_input(), 11);
  }
  for (auto change : std::vector<void (*)(GenerationRequest&)>{
           [](GenerationRequest& r) { r.sampling.repetition_penalty = 1.2f; },
           [](GenerationRequest& r) { r.sampling.presence_penalty = 0.5f; },
           [](GenerationRequest& r) { r.sampling.frequency_penalty = -0.5f; },
           [](GenerationRequest& r) { r.logprobs.enabled = true; }}) {
    GenerationRequest needs_host = plain;
    change(needs_host);
    EXPECT_FALSE(MakeActive(needs_host).DeviceSampling());
  }
  // min_new_tokens masks eos until reached; then the device may sample.
  GenerationRequest min_new = plain;
  min_new.stopping.min_new_tokens = 2;
  ActiveRequest request = MakeActive(min_new);
  EXPECT_FALSE(request.DeviceSampling());
  request.AcceptSampled(10);
  EXPECT_FALSE(request.DeviceSampling());
  request.AcceptSampled(11);
  EXPECT_TRUE(request.DeviceSampling());
  // Nothing to mask (eos ignored, no stop ids): the device may sample from the start.
  min_new.stopping.ignore_eos = true;
  EXPECT_TRUE(MakeActive(min_new).DeviceSampling());
}

// StepAndSample's tokens are the host sampler's (SampleToken on Step's logits, draw
// UniformDraw(seed, draw_index)) for greedy, temperature, top-k, top-p and min-p rows.
TEST(StepAndSampleVersusHostSamplerTest, TokensEqualSampleTokenOnStepLogits) {
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
      sampling.push_back({.temperature = options[i].temperature,
                          .top_k = options[i].top_k,
                          .top_p = options[i].top_p,
                          .min_p = options[i].min_p,
                          .seed = 1000 + i,
                          .draw_index = static_cast<uint64_t>(step * 3 + i)});
    }
    std::vector<float> logits(slots.size() * vocab);
    ASSERT_TRUE((*model)->Step(**stepped, slots, inputs, logits).ok());
    std::vector<int32_t> got(slots.size(), -1);
    ASSERT_TRUE((*model)->StepAndSample(**sampled, slots, inputs, sampling, got).ok());
    for (size_t i = 0; i < slots.size(); ++i) {
      const std::span<const float> row(logits.data() + i * vocab, vocab);
      EXPECT_EQ(got[i], SampleToken(row, options[i],
                                    kernels::UniformDraw(sampling[i].seed, sampling[i].draw_index)))
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
                             std::span<int32_t> out_tokens) override {
    ++counts_->sampled_steps;
    return model_->StepAndSample(states, slots, tokens, sampling, out_tokens);
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
};

// Runs `requests` concurrently (all submitted before the engine starts) to the end.
RunResult RunAll(const std::string& variant, DeviceSampling mode,
                 const std::vector<GenerationRequest>& requests) {
  RunResult result;
  auto loaded = models::LanguageModel::Load(GoldenModelDir(variant), kernels::Backend::kCpu);
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  if (!loaded.ok()) return result;
  auto model = std::make_unique<CountingModel>(*std::move(loaded));
  const std::shared_ptr<CountingModel::Counts> counts = model->counts();
  SchedulerOptions options;
  options.max_slots = 16;
  options.prefill_chunk = 8;
  options.device_sampling = mode;
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

class SchedulerDeviceSamplingTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(GoldenModelDir(GetParam()) / "config.json")) {
      GTEST_SKIP() << "no golden model " << GetParam();
    }
  }
};

TEST_P(SchedulerDeviceSamplingTest, DeviceAndHostSamplingGiveTheSameTokenStreams) {
  const std::vector<GenerationRequest> requests = DeviceFriendlyRequests();
  const RunResult host = RunAll(GetParam(), DeviceSampling::kNever, requests);
  const RunResult device = RunAll(GetParam(), DeviceSampling::kAlways, requests);
  ASSERT_EQ(host.ids.size(), requests.size());
  EXPECT_EQ(device.ids, host.ids);
  for (size_t i = 0; i < requests.size(); ++i) EXPECT_FALSE(host.ids[i].empty()) << i;
  EXPECT_EQ(host.sampled_steps, 0);
  EXPECT_GT(host.steps, 0);
  EXPECT_EQ(device.steps, 0) << "every decode step qualified for the device";
  EXPECT_GT(device.sampled_steps, 0);
  // kAuto on the cpu backend keeps the host sampler.
  const RunResult automatic = RunAll(GetParam(), DeviceSampling::kAuto, requests);
  EXPECT_EQ(automatic.ids, host.ids);
  EXPECT_EQ(automatic.sampled_steps, 0);
}

TEST_P(SchedulerDeviceSamplingTest, ARequestNeedingHostLogitsSendsItsBatchesToTheHostPath) {
  std::vector<GenerationRequest> requests = DeviceFriendlyRequests();
  GenerationRequest logprobs = requests[1];
  logprobs.logprobs.enabled = true;
  logprobs.logprobs.top_n = 2;
  logprobs.stopping.max_new_tokens = 8;  // ends early: later steps may use the device again
  GenerationRequest penalised = requests[3];
  penalised.sampling.repetition_penalty = 1.3f;
  penalised.stopping.max_new_tokens = 12;
  GenerationRequest min_new = requests[2];
  min_new.stopping.ignore_eos = false;
  min_new.stopping.min_new_tokens = 4;  // eos masked for its first 4 tokens
  requests.push_back(logprobs);
  requests.push_back(penalised);
  requests.push_back(min_new);

  const RunResult host = RunAll(GetParam(), DeviceSampling::kNever, requests);
  const RunResult device = RunAll(GetParam(), DeviceSampling::kAlways, requests);
  ASSERT_EQ(host.ids.size(), requests.size());
  EXPECT_EQ(device.ids, host.ids);
  EXPECT_GT(device.steps, 0) << "batches with the logprobs/penalty request use Step";
  EXPECT_GT(device.sampled_steps, 0) << "batches after it finished use StepAndSample";
  // The logprobs request still gets one logprob entry per token, as on the host path.
  const size_t logprobs_index = requests.size() - 3;
  size_t entries = 0;
  for (const TokenChunk& chunk : device.chunks[logprobs_index]) entries += chunk.logprobs.size();
  EXPECT_EQ(entries, device.ids[logprobs_index].size());
}

INSTANTIATE_TEST_SUITE_P(GoldenModels, SchedulerDeviceSamplingTest,
                         ::testing::Values("abc", "softmax"));

}  // namespace
}  // namespace slotserve::engine
