// The C++ engine against the PyTorch reference's logits (docs/ARCHITECTURE.md "Tests"): for every
// golden variant (our format's models/ and fla's checkpoints fla/) and backend, every logit within
// 1e-4 however the tokens reach the model — the whole prompt at once, in chunks, one token at a
// time, in Step batches shared with other requests at other slots, and after the state was forked,
// saved and restored.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "models/language_model.h"
#include "tests/cuda_test_gate.h"
#include "tests/golden/golden_data.h"

namespace slotserve::golden {
namespace {

using models::LanguageModel;
using models::LogitsWanted;
using models::StateArena;

constexpr float kTolerance = 1e-4f;

struct GoldenCase {
  std::string variant;  // the test name's part: "abc", "fla_gsa"
  std::filesystem::path dir;
  kernels::Backend backend;
};

void PrintTo(const GoldenCase& golden_case, std::ostream* out) {
  *out << golden_case.variant << "/" << kernels::BackendName(golden_case.backend);
}

std::vector<GoldenCase> Cases() {
  std::vector<kernels::Backend> backends = {kernels::Backend::kReference, kernels::Backend::kCpu};
  if (kernels::CudaCompiledIn()) backends.push_back(kernels::Backend::kCuda);
  std::vector<GoldenCase> cases;
  for (const std::string& variant : GoldenVariants()) {
    for (kernels::Backend backend : backends) {
      cases.push_back({variant, GoldenModelsDir() / variant, backend});
    }
  }
  // fla checkpoints in fla's own layout and names (docs/FLA_CHECKPOINTS.md), loaded as stored.
  for (const std::string& variant : GoldenVariants(GoldenFlaDir())) {
    for (kernels::Backend backend : backends) {
      cases.push_back({"fla_" + variant, GoldenFlaDir() / variant, backend});
    }
  }
  return cases;
}

class GoldenLogitsTest : public ::testing::TestWithParam<GoldenCase> {
 protected:
  void SetUp() override {
    if (GetParam().backend == kernels::Backend::kCuda) SLOTSERVE_GATE_CUDA_TEST();
    const auto dir = GetParam().dir;
    auto golden = LoadGoldenData(dir);
    ASSERT_TRUE(golden.ok()) << golden.status();
    golden_ = *std::move(golden);
    auto model = LanguageModel::Load(dir, GetParam().backend);
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = *std::move(model);
    ASSERT_EQ(model_->config().vocab_size, golden_.vocab_size);
    vocab_ = golden_.vocab_size;
    auto states = model_->AllocateStates(8);
    ASSERT_TRUE(states.ok()) << states.status();
    states_ = *std::move(states);
  }

  // Logits of every token of `tokens` fed to `slot` in chunks of `chunk` tokens.
  std::vector<float> PrefillInChunks(int slot, std::span<const int32_t> tokens, size_t chunk) {
    std::vector<float> logits(tokens.size() * vocab_);
    for (size_t first = 0; first < tokens.size(); first += chunk) {
      const size_t rows = std::min(chunk, tokens.size() - first);
      const absl::Status status =
          model_->Prefill(*states_, slot, tokens.subspan(first, rows), LogitsWanted::kEveryToken,
                          std::span(logits).subspan(first * vocab_, rows * vocab_));
      EXPECT_TRUE(status.ok()) << status;
    }
    return logits;
  }

  // Compares rows [first, first + count) of the golden logits with `logits` and reports the
  // largest difference.
  void ExpectGoldenRows(std::span<const float> logits, size_t first, const std::string& how) {
    const size_t count = logits.size() / vocab_;
    const float diff = MaxAbsDiff(
        logits, std::span<const float>(golden_.logits).subspan(first * vocab_, count * vocab_));
    std::printf("[golden] %-20s %-9s %-22s max abs diff %.3g\n", GetParam().variant.c_str(),
                kernels::BackendName(GetParam().backend), how.c_str(), diff);
    EXPECT_LE(diff, kTolerance) << how << ", rows " << first << ".." << first + count - 1;
  }

  std::span<const int32_t> Tokens() const { return golden_.tokens; }

  GoldenData golden_;
  int vocab_ = 0;
  std::unique_ptr<LanguageModel> model_;
  std::unique_ptr<StateArena> states_;
};

TEST_P(GoldenLogitsTest, WholePrompt) {
  ExpectGoldenRows(PrefillInChunks(0, Tokens(), Tokens().size()), 0, "whole prompt");
}

TEST_P(GoldenLogitsTest, WholePromptLastTokenOnly) {
  std::vector<float> last(vocab_);
  ASSERT_TRUE(model_->Prefill(*states_, 3, Tokens(), LogitsWanted::kLastToken, last).ok());
  ExpectGoldenRows(last, Tokens().size() - 1, "last token only");
}

TEST_P(GoldenLogitsTest, ChunksOf7) {
  ExpectGoldenRows(PrefillInChunks(1, Tokens(), 7), 0, "chunks of 7");
}

TEST_P(GoldenLogitsTest, ChunksOf16) {
  ExpectGoldenRows(PrefillInChunks(7, Tokens(), 16), 0, "chunks of 16");
}

TEST_P(GoldenLogitsTest, OneTokenPerPrefill) {
  ExpectGoldenRows(PrefillInChunks(2, Tokens(), 1), 0, "one token per prefill");
}

TEST_P(GoldenLogitsTest, OneTokenPerStep) {
  const int32_t slot = 4;
  std::vector<float> logits = PrefillInChunks(slot, Tokens().first(1), 1);
  logits.resize(Tokens().size() * vocab_);
  for (size_t t = 1; t < Tokens().size(); ++t) {
    const absl::Status status = model_->Step(*states_, {&slot, 1}, Tokens().subspan(t, 1),
                                             std::span(logits).subspan(t * vocab_, vocab_));
    ASSERT_TRUE(status.ok()) << status;
  }
  ExpectGoldenRows(logits, 0, "one token per step");
}

// The target request sits in slot 5 of 8 and steps in batches with other requests at other
// slots and positions; one of them leaves and another joins midway. The target's logits must
// match the golden ones, and every other request's must match its own run alone.
TEST_P(GoldenLogitsTest, SharedStepBatches) {
  const size_t n = Tokens().size();
  // Other requests' sequences: the golden tokens reversed, and rotated by 5.
  std::vector<int32_t> reversed(Tokens().rbegin(), Tokens().rend());
  std::vector<int32_t> rotated(n);
  for (size_t i = 0; i < n; ++i) rotated[i] = Tokens()[(i + 5) % n];

  struct Other {
    int32_t slot;
    std::vector<int32_t> tokens;
    size_t prompt;      // tokens prefilled before it starts stepping
    size_t join_step;   // target step index at which it is prefilled
    size_t leave_step;  // target step index after which it stops
    std::vector<float> logits;
    size_t fed = 0;
  };
  std::vector<Other> others = {
      {1, reversed, 10, 0, 15, {}},
      {6, rotated, 5, 0, n, {}},
      {0, rotated, 3, 20, n, {}},  // joins late, at a lower slot
  };
  const int32_t target_slot = 5;
  const size_t target_prompt = 3;
  std::vector<float> target = PrefillInChunks(target_slot, Tokens().first(target_prompt), 2);
  target.resize(n * vocab_);

  for (size_t t = target_prompt; t < n; ++t) {
    const size_t step = t - target_prompt;
    std::vector<int32_t> slots;
    std::vector<int32_t> tokens;
    std::vector<Other*> stepping;
    for (Other& other : others) {
      if (step == other.join_step) {
        other.logits = PrefillInChunks(other.slot, std::span(other.tokens).first(other.prompt), 4);
        other.fed = other.prompt;
      } else if (step > other.join_step && step <= other.leave_step &&
                 other.fed < other.tokens.size()) {
        slots.push_back(other.slot);
        tokens.push_back(other.tokens[other.fed]);
        stepping.push_back(&other);
      }
    }
    // The target in the middle of the batch.
    const size_t target_row = slots.size() / 2;
    slots.insert(slots.begin() + target_row, target_slot);
    tokens.insert(tokens.begin() + target_row, Tokens()[t]);
    std::vector<float> logits(slots.size() * vocab_);
    const absl::Status status = model_->Step(*states_, slots, tokens, logits);
    ASSERT_TRUE(status.ok()) << status;
    std::copy_n(logits.begin() + target_row * vocab_, vocab_, target.begin() + t * vocab_);
    for (size_t i = 0; i < stepping.size(); ++i) {
      const size_t row = i < target_row ? i : i + 1;
      stepping[i]->logits.insert(stepping[i]->logits.end(), logits.begin() + row * vocab_,
                                 logits.begin() + (row + 1) * vocab_);
      ++stepping[i]->fed;
    }
  }
  ExpectGoldenRows(target, 0, "shared step batches");

  // Each other request alone, in a fresh arena, from its own prompt.
  for (const Other& other : others) {
    auto alone_states = model_->AllocateStates(1);
    ASSERT_TRUE(alone_states.ok());
    std::vector<float> alone(other.fed * vocab_);
    ASSERT_TRUE(model_
                    ->Prefill(**alone_states, 0, std::span(other.tokens).first(other.fed),
                              LogitsWanted::kEveryToken, alone)
                    .ok());
    EXPECT_LE(MaxAbsDiff(other.logits, alone), kTolerance) << "request in slot " << other.slot;
  }
}

// Halfway through, the request is forked into another slot (and the original emptied), and
// later saved, wiped and restored into a third slot; it must continue exactly.
TEST_P(GoldenLogitsTest, ForkedSavedAndRestoredState) {
  const size_t n = Tokens().size();
  const size_t fork_at = n / 2;
  const size_t save_at = fork_at + 7;
  std::vector<float> logits = PrefillInChunks(2, Tokens().first(fork_at), 8);
  ASSERT_TRUE(states_->Copy(2, 6).ok());
  ASSERT_TRUE(states_->Reset(2).ok());
  std::vector<float> middle = PrefillInChunks(6, Tokens().subspan(fork_at, save_at - fork_at), 3);
  std::vector<uint8_t> snapshot;
  ASSERT_TRUE(states_->Save(6, &snapshot).ok());
  ASSERT_TRUE(states_->Reset(6).ok());
  ASSERT_TRUE(states_->Restore(3, snapshot).ok());
  EXPECT_EQ(states_->position(3), static_cast<int32_t>(save_at));
  std::vector<float> rest = PrefillInChunks(3, Tokens().subspan(save_at), 5);
  logits.insert(logits.end(), middle.begin(), middle.end());
  logits.insert(logits.end(), rest.begin(), rest.end());
  ExpectGoldenRows(logits, 0, "fork, save, restore");
}

INSTANTIATE_TEST_SUITE_P(Variants, GoldenLogitsTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) {
                           return info.param.variant + "_" +
                                  kernels::BackendName(info.param.backend);
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GoldenLogitsTest);

}  // namespace
}  // namespace slotserve::golden
