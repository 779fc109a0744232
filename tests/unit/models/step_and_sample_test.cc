// LanguageModel::StepAndSample on the golden models, on every backend: each row's token is
// what the reference sampling op (kernels/sampling.h) picks from Step's logits for the same
// step with the same options, seed and draw index, and every slot's state and position ends
// exactly as Step leaves it. The batch mixes greedy, temperature, top-k, top-p and min-p rows
// at scattered slots, and is not a padding bucket, so padded rows sit after the real ones.
// Rows with penalties, masks and raw logits, and PrefillAndSample (a prompt's first token), are
// held to the same reference.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/sampling.h"
#include "models/language_model.h"
#include "models/sampling_columns.h"
#include "tests/unit/kernels/test_backends.h"

namespace slotserve::models {
namespace {

// One row as these tests write it (the options and adjustments of one request's token);
// Columns lays rows out as a selecting call takes them.
struct RowOptions {
  float temperature = 1.0f;
  int32_t top_k = 0;
  float top_p = 1.0f;
  float min_p = 0.0f;
  float repetition_penalty = 1.0f;
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
};
struct SamplingRow {
  RowOptions options;
  uint64_t seed = 0;
  uint64_t draw_index = 0;
  std::span<const kernels::PenalisedToken> penalised = {};
  std::span<const kernels::BiasedToken> biased = {};
  std::span<const int32_t> masked = {};
  bool want_raw_logits = false;
};

SamplingColumns Columns(std::span<const SamplingRow> rows) {
  SamplingColumns columns;
  for (const SamplingRow& row : rows) {
    columns.temperature.push_back(row.options.temperature);
    columns.top_k.push_back(row.options.top_k);
    columns.top_p.push_back(row.options.top_p);
    columns.min_p.push_back(row.options.min_p);
    columns.repetition_penalty.push_back(row.options.repetition_penalty);
    columns.presence_penalty.push_back(row.options.presence_penalty);
    columns.frequency_penalty.push_back(row.options.frequency_penalty);
    columns.seeds.push_back(row.seed);
    columns.draw_index.push_back(row.draw_index);
    columns.AddLists(row.penalised, row.biased, row.masked);
    columns.want_raw_logits.push_back(row.want_raw_logits ? 1 : 0);
  }
  return columns;
}

constexpr int kSlots = 12;
constexpr int kSteps = 4;

struct SamplingCase {
  std::string variant;
  kernels::Backend backend;
};

void PrintTo(const SamplingCase& c, std::ostream* out) {
  *out << c.variant << "/" << kernels::BackendName(c.backend);
}

std::string CaseName(const ::testing::TestParamInfo<SamplingCase>& info) {
  return info.param.variant + "_" + kernels::BackendName(info.param.backend);
}

// Five requests at scattered slots (padded to 8 rows): one of each kind of sampling, each with
// its own seed and draw index.
const std::vector<int32_t> kBatchSlots = {9, 2, 7, 0, 5};
std::vector<SamplingRow> BatchSampling(int step) {
  const uint64_t draw = static_cast<uint64_t>(step);
  return {
      {.options = {.temperature = 0.0f}, .seed = 11, .draw_index = draw},         // greedy
      {.options = {.temperature = 1.3f}, .seed = 12345, .draw_index = 3 + draw},  // temperature
      {.options = {.temperature = 1.0f, .top_k = 4}, .seed = 77, .draw_index = 1000 + draw},
      {.options = {.temperature = 0.9f, .top_p = 0.8f}, .seed = 5, .draw_index = 17 + draw},
      {.options = {.temperature = 1.5f, .min_p = 0.2f}, .seed = 99, .draw_index = 40 + draw},
  };
}

// The reference op run on a copy of host logits, with its own per-field arrays (independent
// of how the model stages them).
std::vector<int32_t> ReferenceTokens(std::span<const float> logits, int vocab,
                                     std::span<const SamplingRow> sampling) {
  const size_t rows = sampling.size();
  std::vector<float> adjusted(logits.begin(), logits.end());
  std::vector<float> temperature, top_p, min_p, repetition, presence, frequency;
  std::vector<int32_t> top_k, out(rows, -1), penalised_offsets = {0}, biased_offsets = {0},
                                             masked_offsets = {0};
  std::vector<int32_t> masked;
  std::vector<kernels::PenalisedToken> penalised;
  std::vector<kernels::BiasedToken> biased;
  std::vector<uint64_t> seeds, draws;
  for (const SamplingRow& row : sampling) {
    temperature.push_back(row.options.temperature);
    top_k.push_back(row.options.top_k);
    top_p.push_back(row.options.top_p);
    min_p.push_back(row.options.min_p);
    repetition.push_back(row.options.repetition_penalty);
    presence.push_back(row.options.presence_penalty);
    frequency.push_back(row.options.frequency_penalty);
    seeds.push_back(row.seed);
    draws.push_back(row.draw_index);
    penalised.insert(penalised.end(), row.penalised.begin(), row.penalised.end());
    penalised_offsets.push_back(static_cast<int32_t>(penalised.size()));
    biased.insert(biased.end(), row.biased.begin(), row.biased.end());
    biased_offsets.push_back(static_cast<int32_t>(biased.size()));
    masked.insert(masked.end(), row.masked.begin(), row.masked.end());
    masked_offsets.push_back(static_cast<int32_t>(masked.size()));
  }
  kernels::SamplingParams params;
  params.logits = adjusted.data();
  params.logits_stride = vocab;
  params.rows = static_cast<int>(rows);
  params.vocab = vocab;
  params.temperature = temperature.data();
  params.top_k = top_k.data();
  params.top_p = top_p.data();
  params.min_p = min_p.data();
  params.seeds = seeds.data();
  params.draw_index = draws.data();
  params.repetition_penalty = repetition.data();
  params.presence_penalty = presence.data();
  params.frequency_penalty = frequency.data();
  params.penalised_offsets = penalised_offsets.data();
  params.penalised = penalised.data();
  params.biased_offsets = biased_offsets.data();
  params.biased = biased.data();
  params.masked_offsets = masked_offsets.data();
  params.masked = masked.data();
  params.out_tokens = out.data();
  kernels::LaunchSampling(kernels::Backend::kReference, params);
  return out;
}

class StepAndSampleTest : public ::testing::TestWithParam<SamplingCase> {
 protected:
  void SetUp() override {
    SLOTSERVE_SKIP_IF_UNAVAILABLE(GetParam().backend);
    const std::filesystem::path dir =
        std::filesystem::path(SLOTSERVE_GOLDEN_MODELS_DIR) / GetParam().variant;
    if (!std::filesystem::exists(dir / "config.json")) {
      GTEST_SKIP() << "no golden model at " << dir << " (tests/golden/make_golden.py writes it)";
    }
    auto model = LanguageModel::Load(dir, GetParam().backend);
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = *std::move(model);
    vocab_ = model_->config().vocab_size;
  }

  // An arena whose every slot holds a different short prompt.
  std::unique_ptr<StateArena> PrefilledArena() {
    auto states = model_->AllocateStates(kSlots);
    EXPECT_TRUE(states.ok()) << states.status();
    if (!states.ok()) return nullptr;
    std::vector<float> logits(vocab_);
    for (int slot = 0; slot < kSlots; ++slot) {
      std::vector<int32_t> prompt;
      for (int t = 0; t < 2 + slot % 4; ++t) prompt.push_back((7 * slot + 5 * t + 3) % vocab_);
      const absl::Status status =
          model_->Prefill(**states, slot, prompt, LogitsWanted::kLastToken, logits);
      EXPECT_TRUE(status.ok()) << status;
    }
    return *std::move(states);
  }

  std::unique_ptr<LanguageModel> model_;
  int vocab_ = 0;
};

TEST_P(StepAndSampleTest, TokensMatchReferenceSamplingOfStepLogitsAndStatesMatchStep) {
  std::unique_ptr<StateArena> stepped = PrefilledArena();
  std::unique_ptr<StateArena> sampled = PrefilledArena();
  ASSERT_TRUE(stepped && sampled);
  std::vector<int32_t> inputs;
  for (int32_t slot : kBatchSlots) inputs.push_back((3 * slot + 1) % vocab_);

  int sampled_rows_that_moved = 0;  // rows whose token differs from greedy's: the draws count
  for (int step = 0; step < kSteps; ++step) {
    SCOPED_TRACE(::testing::Message() << "step " << step);
    const std::vector<SamplingRow> sampling = BatchSampling(step);
    std::vector<float> logits(kBatchSlots.size() * vocab_);
    ASSERT_TRUE(model_->Step(*stepped, kBatchSlots, inputs, logits).ok());
    const std::vector<int32_t> expected = ReferenceTokens(logits, vocab_, sampling);

    std::vector<int32_t> got(kBatchSlots.size(), -1);
    const absl::Status status =
        model_->StepAndSample(*sampled, kBatchSlots, inputs, Columns(sampling), got, {});
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(got, expected);

    const std::vector<SamplingRow> greedy(sampling.size(),
                                          SamplingRow{.options = {.temperature = 0.0f}});
    const std::vector<int32_t> argmax = ReferenceTokens(logits, vocab_, greedy);
    for (size_t i = 1; i < got.size(); ++i) sampled_rows_that_moved += got[i] != argmax[i];
    inputs = got;
  }
  // Otherwise the sampled rows could have been decoded greedily and the test would not know.
  EXPECT_GT(sampled_rows_that_moved, 0);

  for (int slot = 0; slot < kSlots; ++slot) {
    std::vector<uint8_t> want, have;
    ASSERT_TRUE(stepped->Save(slot, &want).ok());
    ASSERT_TRUE(sampled->Save(slot, &have).ok());
    EXPECT_EQ(have, want) << "slot " << slot << " differs from Step's";
    EXPECT_EQ(sampled->position(slot), stepped->position(slot)) << "slot " << slot;
  }
}

TEST_P(StepAndSampleTest, GrowingAndShrinkingBatchesReuseTheStagedOptions) {
  std::unique_ptr<StateArena> stepped = PrefilledArena();
  std::unique_ptr<StateArena> sampled = PrefilledArena();
  ASSERT_TRUE(stepped && sampled);
  // 1, then 11 (more rows than the first staging buffer holds), then 3 rows.
  for (int rows : {1, 11, 3}) {
    SCOPED_TRACE(::testing::Message() << rows << " rows");
    std::vector<int32_t> slots, inputs;
    std::vector<SamplingRow> sampling;
    for (int i = 0; i < rows; ++i) {
      slots.push_back((5 * i + 1) % kSlots);
      inputs.push_back((2 * i + rows) % vocab_);
      sampling.push_back({.options = {.temperature = 1.0f, .top_k = i % 3 == 0 ? 0 : 6},
                          .seed = static_cast<uint64_t>(100 * rows + i),
                          .draw_index = static_cast<uint64_t>(i)});
    }
    std::vector<float> logits(rows * vocab_);
    ASSERT_TRUE(model_->Step(*stepped, slots, inputs, logits).ok());
    std::vector<int32_t> got(rows, -1);
    ASSERT_TRUE(model_->StepAndSample(*sampled, slots, inputs, Columns(sampling), got, {}).ok());
    EXPECT_EQ(got, ReferenceTokens(logits, vocab_, sampling));
  }
}

TEST_P(StepAndSampleTest, RefusesBadInputsWithoutTouchingTheSlots) {
  std::unique_ptr<StateArena> states = PrefilledArena();
  ASSERT_TRUE(states);
  const std::vector<int32_t> slots = {3, 4};
  const std::vector<int32_t> inputs = {1, 2};
  std::vector<int32_t> out(2);
  const std::vector<SamplingRow> good(2);
  auto expect_refused = [&](std::span<const int32_t> s, std::span<const int32_t> t,
                            std::span<const SamplingRow> options, std::span<int32_t> o,
                            const std::string& needle) {
    const absl::Status status = model_->StepAndSample(*states, s, t, Columns(options), o, {});
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_NE(status.message().find(needle), std::string::npos) << status;
  };
  expect_refused(slots, inputs, std::span(good).first(1), out,
                 "sampling columns of 1 rows for 2 slots");
  {
    std::vector<SamplingRow> wants_raw = good;
    wants_raw[1].want_raw_logits = true;
    const absl::Status status =
        model_->StepAndSample(*states, slots, inputs, Columns(wants_raw), out, {});
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_NE(status.message().find("raw_logits holds 0 floats"), std::string::npos) << status;
  }
  expect_refused(slots, inputs, good, std::span(out).first(1), "out_tokens holds 1 ids");
  const std::vector<int32_t> repeated = {3, 3};
  expect_refused(repeated, inputs, good, out, "appears more than once");
  // Ids and options are the engine entry's to refuse (engine/request_validation.cc): below it
  // an id out of range is a caller's bug, guarded as INTERNAL so the embedding is never read
  // out of bounds, and the rows' options are not checked again.
  const std::vector<int32_t> bad_token = {1, vocab_};
  const absl::Status guarded =
      model_->StepAndSample(*states, slots, bad_token, Columns(good), out, {});
  EXPECT_EQ(guarded.code(), absl::StatusCode::kInternal) << guarded;
  EXPECT_NE(guarded.message().find(
                absl::StrCat("token ", vocab_, " at index 1 is outside [0, ", vocab_, ")")),
            std::string::npos)
      << guarded;

  for (int32_t slot : slots) EXPECT_EQ(states->position(slot), 2 + slot % 4) << slot;
}

// Rows with penalties, masks and raw logits: the op adjusts each row from its own lists (so a
// masked argmax moves the greedy row), and the raw rows come back as Step wrote them.
TEST_P(StepAndSampleTest, AdjustedRowsAndRawLogitsMatchTheReferenceOnStepLogits) {
  std::unique_ptr<StateArena> stepped = PrefilledArena();
  std::unique_ptr<StateArena> sampled = PrefilledArena();
  ASSERT_TRUE(stepped && sampled);
  const std::vector<int32_t> slots = {4, 1, 8};
  const std::vector<int32_t> inputs = {2, 5 % vocab_, 9 % vocab_};
  std::vector<float> logits(slots.size() * vocab_);
  ASSERT_TRUE(model_->Step(*stepped, slots, inputs, logits).ok());
  const std::vector<SamplingRow> greedy(slots.size(),
                                        SamplingRow{.options = {.temperature = 0.0f}});
  const std::vector<int32_t> argmax = ReferenceTokens(logits, vocab_, greedy);

  // Row 0: greedy with its argmax masked (and biased up: the mask wins). Row 1: penalties over
  // a history holding its argmax, and biases. Row 2: sampled with all three, and logprobs.
  // Rows 0 and 2 want their raw logits.
  const std::vector<int32_t> masked0 = {argmax[0], 3 % vocab_};
  const std::vector<kernels::BiasedToken> bias0 = {{.id = argmax[0], .bias = 100.0f}};
  const std::vector<kernels::BiasedToken> bias1 = {{.id = argmax[1], .bias = 1.5f},
                                                   {.id = 7 % vocab_, .bias = -2.0f}};
  const std::vector<kernels::BiasedToken> bias2 = {{.id = 1, .bias = 80.0f},
                                                   {.id = 4 % vocab_, .bias = 3.0f}};
  const std::vector<kernels::PenalisedToken> history1 = {{.id = argmax[1], .generated = 2},
                                                         {.id = 0, .generated = 0},
                                                         {.id = 6 % vocab_, .generated = 1}};
  const std::vector<int32_t> masked2 = {1};
  std::vector<SamplingRow> sampling = {
      {.options = {.temperature = 0.0f},
       .seed = 1,
       .biased = bias0,
       .masked = masked0,
       .want_raw_logits = true},
      {.options = {.temperature = 0.0f,
                   .repetition_penalty = 3.0f,
                   .presence_penalty = 2.0f,
                   .frequency_penalty = 1.5f},
       .seed = 2,
       .penalised = history1,
       .biased = bias1},
      {.options = {.temperature = 0.8f, .top_k = 20, .repetition_penalty = 1.2f},
       .seed = 3,
       .draw_index = 4,
       .penalised = history1,
       .biased = bias2,
       .masked = masked2,
       .want_raw_logits = true},
  };
  std::vector<int32_t> got(slots.size(), -1);
  std::vector<float> raw(2 * vocab_, 0.0f);
  const absl::Status status =
      model_->StepAndSample(*sampled, slots, inputs, Columns(sampling), got, raw);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(got, ReferenceTokens(logits, vocab_, sampling));
  EXPECT_NE(got[0], argmax[0]) << "the masked argmax was picked";
  EXPECT_NE(got[2], 1);
  EXPECT_EQ(std::vector<float>(raw.begin(), raw.begin() + vocab_),
            std::vector<float>(logits.begin(), logits.begin() + vocab_));
  EXPECT_EQ(std::vector<float>(raw.begin() + vocab_, raw.end()),
            std::vector<float>(logits.begin() + 2 * vocab_, logits.end()));
}

// A prompt's first token: PrefillAndSample leaves the state as Prefill does and picks what the
// reference op picks from Prefill's last logits.
TEST_P(StepAndSampleTest, PrefillAndSampleSelectsAsTheReferenceDoesOnPrefillLogits) {
  auto prefilled = model_->AllocateStates(2);
  auto selected = model_->AllocateStates(2);
  ASSERT_TRUE(prefilled.ok() && selected.ok());
  std::vector<int32_t> prompt;
  for (int t = 0; t < 9; ++t) prompt.push_back((11 * t + 4) % vocab_);
  const std::vector<int32_t> masked = {prompt[2]};
  const std::vector<kernels::PenalisedToken> history = {{.id = prompt[0], .generated = 0},
                                                        {.id = prompt[1], .generated = 0}};
  for (const SamplingRow& sampling :
       {SamplingRow{.options = {.temperature = 0.0f}, .seed = 5},
        SamplingRow{.options = {.temperature = 1.1f, .top_p = 0.9f, .repetition_penalty = 1.5f},
        .seed = 6,
        .draw_index = 2,
        .penalised = history,
        .masked = masked,
        .want_raw_logits = true}}) {
    SCOPED_TRACE(::testing::Message() << "temperature " << sampling.options.temperature);
    const int slot = sampling.want_raw_logits ? 1 : 0;
    std::vector<float> logits(vocab_);
    ASSERT_TRUE(model_->Prefill(**prefilled, slot, prompt, LogitsWanted::kLastToken, logits).ok());
    std::vector<float> raw(sampling.want_raw_logits ? vocab_ : 0);
    absl::StatusOr<int32_t> token =
        model_->PrefillAndSample(**selected, slot, prompt, Columns({&sampling, 1}), raw);
    ASSERT_TRUE(token.ok()) << token.status();
    EXPECT_EQ(*token, ReferenceTokens(logits, vocab_, {&sampling, 1})[0]);
    if (sampling.want_raw_logits) {
      EXPECT_EQ(raw, logits);
    }
    std::vector<uint8_t> want, have;
    ASSERT_TRUE((*prefilled)->Save(slot, &want).ok());
    ASSERT_TRUE((*selected)->Save(slot, &have).ok());
    EXPECT_EQ(have, want);
    EXPECT_EQ((*selected)->position(slot), (*prefilled)->position(slot));
  }
  // The shape check that stays: a row that wants its raw logits needs room for them.
  SamplingRow wants_raw;
  wants_raw.want_raw_logits = true;
  absl::StatusOr<int32_t> refused =
      model_->PrefillAndSample(**selected, 0, prompt, Columns({&wants_raw, 1}), {});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("PrefillAndSample: raw_logits holds 0 floats"),
            std::string::npos)
      << refused.status();
  EXPECT_EQ((*selected)->position(0), static_cast<int32_t>(prompt.size())) << "slot untouched";
}

std::vector<SamplingCase> Cases() {
  std::vector<SamplingCase> cases;
  for (const char* variant : {"abc", "rfa_gate_interleave", "luna_softplus", "softmax"}) {
    for (kernels::Backend backend : kernels::testing::AllBackends()) {
      cases.push_back({variant, backend});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(GoldenModels, StepAndSampleTest, ::testing::ValuesIn(Cases()), CaseName);

}  // namespace
}  // namespace slotserve::models
