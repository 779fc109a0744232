// TransformerModel behaviour that the golden logits do not cover: state sizes, input
// validation (refused calls change nothing), and the state operations the server relies on
// (fork by copy, save/restore, reset) giving exactly the logits of an uninterrupted request.
#include "models/language_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <span>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/models/test_model_dir.h"

namespace slotserve::models {
namespace {

using testing::SmallConfig;

constexpr int kVocab = 40;  // SmallConfig's

struct ModelCase {
  std::string kind;
  kernels::Backend backend;
};

void PrintTo(const ModelCase& model_case, std::ostream* out) {
  *out << model_case.kind << "/" << kernels::BackendName(model_case.backend);
}

class LanguageModelTest : public ::testing::TestWithParam<ModelCase> {
 protected:
  void SetUp() override {
    testing::WriteModelDir(dir_.path(), SmallConfig(GetParam().kind));
    auto model = LanguageModel::Load(dir_.path(), GetParam().backend);
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = *std::move(model);
    auto states = model_->AllocateStates(4);
    ASSERT_TRUE(states.ok()) << states.status();
    states_ = *std::move(states);
  }

  std::vector<float> PrefillLast(int slot, const std::vector<int32_t>& tokens) {
    std::vector<float> logits(kVocab);
    const absl::Status status =
        model_->Prefill(*states_, slot, tokens, LogitsWanted::kLastToken, logits);
    EXPECT_TRUE(status.ok()) << status;
    return logits;
  }
  std::vector<float> StepOne(int slot, int32_t token) {
    std::vector<float> logits(kVocab);
    const absl::Status status = model_->Step(*states_, {&slot, 1}, {&token, 1}, logits);
    EXPECT_TRUE(status.ok()) << status;
    return logits;
  }
  static void ExpectRefused(const absl::Status& status, absl::StatusCode code,
                            const std::string& expected) {
    EXPECT_EQ(status.code(), code) << status;
    EXPECT_NE(status.message().find(expected), std::string::npos)
        << "message: " << status.message() << "\nexpected to contain: " << expected;
  }
  static void ExpectInvalid(const absl::Status& status, const std::string& expected) {
    ExpectRefused(status, absl::StatusCode::kInvalidArgument, expected);
  }
  // An id out of range is a caller's bug below the engine's entry (which refuses it naming the
  // wire field): the model's guard says INTERNAL, and reads no embedding row for it.
  static void ExpectGuarded(const absl::Status& status, const std::string& expected) {
    ExpectRefused(status, absl::StatusCode::kInternal, expected);
  }

  testing::TempDir dir_;
  std::unique_ptr<LanguageModel> model_;
  std::unique_ptr<StateArena> states_;
};

TEST_P(LanguageModelTest, StateBytesFollowDesignSection3) {
  // SmallConfig: 2 layers, H = 4, d = 4.
  const std::map<std::string, int64_t> floats_per_head = {
      {"abc", 2 * 4 * 4 + 2 * 4},  // K~, V~ [M x d], z, m [M], M = 4
      {"rfa", 2 * 4 * 4 + 2 * 4},  // S [2D x d], z [2D], D = 4
      {"luna", 2 * 4 * 3},         // A [d x L], C [L x d], L = 3
      {"softmax", 2 * 12 * 4},     // K, V [max_context x d], max_context = 12
  };
  const int64_t expected = 2 * 4 * floats_per_head.at(GetParam().kind) * 4;
  EXPECT_EQ(model_->state_bytes_per_request(), expected);
  EXPECT_EQ(states_->bytes_per_slot(), expected);
  EXPECT_EQ(states_->num_slots(), 4);
  if (GetParam().kind == "softmax") {
    EXPECT_EQ(model_->max_positions(), 12);
  } else {
    EXPECT_GT(model_->max_positions(), 1 << 30);
  }
}

TEST_P(LanguageModelTest, NewArenaIsEmpty) {
  std::vector<uint8_t> snapshot;
  ASSERT_TRUE(states_->Save(3, &snapshot).ok());
  EXPECT_TRUE(std::all_of(snapshot.begin(), snapshot.end(), [](uint8_t b) { return b == 0; }));
  ExpectInvalid(model_->AllocateStates(0).status(), "num_slots must be > 0, got 0");
}

TEST_P(LanguageModelTest, PrefillRefusesBadInputAndChangesNothing) {
  std::vector<float> logits(kVocab);
  const std::vector<int32_t> good = {1, 5, 7};
  ExpectGuarded(model_->Prefill(*states_, 0, std::vector<int32_t>{1, kVocab, 3},
                                LogitsWanted::kLastToken, logits),
                "Prefill: token 40 at index 1 is outside [0, 40)");
  ExpectGuarded(
      model_->Prefill(*states_, 0, std::vector<int32_t>{-1}, LogitsWanted::kLastToken, logits),
      "token -1 at index 0");
  ExpectInvalid(model_->Prefill(*states_, 0, {}, LogitsWanted::kLastToken, logits), "no tokens");
  ExpectInvalid(model_->Prefill(*states_, 4, good, LogitsWanted::kLastToken, logits),
                "slot 4 is outside the state arena [0, 4)");
  ExpectInvalid(model_->Prefill(*states_, -1, good, LogitsWanted::kLastToken, logits), "slot -1");
  ExpectInvalid(model_->Prefill(*states_, 0, good, LogitsWanted::kEveryToken, logits),
                "logits holds 40 floats, expected 120");
  std::vector<float> short_logits(kVocab - 1);
  ExpectInvalid(model_->Prefill(*states_, 0, good, LogitsWanted::kLastToken, short_logits),
                "expected 40");
  EXPECT_EQ(states_->position(0), 0);
}

TEST_P(LanguageModelTest, StepRefusesBadInputAndChangesNothing) {
  PrefillLast(0, {1, 5});
  PrefillLast(1, {1, 6});
  std::vector<float> logits(2 * kVocab);
  const std::vector<int32_t> tokens = {3, 4};
  ExpectInvalid(model_->Step(*states_, std::vector<int32_t>{1, 1}, tokens, logits),
                "slot 1 appears more than once");
  ExpectInvalid(model_->Step(*states_, std::vector<int32_t>{0, 7}, tokens, logits),
                "slot 7 at index 1 is outside the state arena");
  ExpectInvalid(model_->Step(*states_, std::vector<int32_t>{0}, tokens, logits),
                "2 tokens for 1 slots");
  ExpectGuarded(model_->Step(*states_, std::vector<int32_t>{0, 1},
                             std::vector<int32_t>{3, kVocab + 5}, logits),
                "Step: token 45 at index 1 is outside [0, 40)");
  std::vector<float> short_logits(kVocab);
  ExpectInvalid(model_->Step(*states_, std::vector<int32_t>{0, 1}, tokens, short_logits),
                "expected 80");
  ExpectInvalid(model_->Step(*states_, {}, {}, {}), "no requests");
  EXPECT_EQ(states_->position(0), 2);
  EXPECT_EQ(states_->position(1), 2);
}

TEST_P(LanguageModelTest, RefusesAnArenaOfAnotherModel) {
  auto buffer = kernels::DeviceBuffer::Allocate(GetParam().backend, 4 * 8 * sizeof(float));
  ASSERT_TRUE(buffer.ok());
  StateArena other(GetParam().backend, 4, 8, *std::move(buffer));
  std::vector<float> logits(kVocab);
  ExpectInvalid(
      model_->Prefill(other, 0, std::vector<int32_t>{1}, LogitsWanted::kLastToken, logits),
      "not allocated by this model");
  const int32_t slot = 0;
  const int32_t token = 1;
  ExpectInvalid(model_->Step(other, {&slot, 1}, {&token, 1}, logits),
                "not allocated by this model");
}

TEST_P(LanguageModelTest, OnlySoftmaxRefusesToGrowPastMaxContext) {
  std::vector<int32_t> prompt(11, 3);
  PrefillLast(0, prompt);
  std::vector<float> logits(2 * kVocab);
  const absl::Status past_prefill =
      model_->Prefill(*states_, 0, std::vector<int32_t>{4, 5}, LogitsWanted::kEveryToken, logits);
  if (GetParam().kind != "softmax") {
    // Constant-size state: no limit at max_context-like lengths.
    EXPECT_TRUE(past_prefill.ok()) << past_prefill;
    EXPECT_EQ(states_->position(0), 13);
    return;
  }
  ExpectInvalid(past_prefill, "slot 0 is at position 11 and cannot take 2 more tokens");
  StepOne(0, 4);  // the 12th and last position
  EXPECT_EQ(states_->position(0), 12);
  const int32_t slot = 0;
  const int32_t token = 5;
  ExpectInvalid(model_->Step(*states_, {&slot, 1}, {&token, 1}, std::span(logits).first(kVocab)),
                "slot 0 is at position 12 and cannot take another token");
  EXPECT_EQ(states_->position(0), 12);
}

TEST_P(LanguageModelTest, PositionsAdvanceByTokensFed) {
  PrefillLast(2, {1, 2, 3});
  EXPECT_EQ(states_->position(2), 3);
  StepOne(2, 4);
  EXPECT_EQ(states_->position(2), 4);
  EXPECT_EQ(states_->position(0), 0);
}

TEST_P(LanguageModelTest, CopiedSlotContinuesLikeTheOriginal) {
  const std::vector<float> after_prompt = PrefillLast(0, {1, 9, 4, 22});
  ASSERT_TRUE(states_->Copy(0, 2).ok());
  // Both continue with the same token in one batch: identical logits.
  std::vector<float> logits(2 * kVocab);
  ASSERT_TRUE(
      model_->Step(*states_, std::vector<int32_t>{2, 0}, std::vector<int32_t>{7, 7}, logits).ok());
  for (int v = 0; v < kVocab; ++v) ASSERT_EQ(logits[v], logits[kVocab + v]) << v;
  EXPECT_EQ(states_->position(2), 5);
  EXPECT_TRUE(std::all_of(after_prompt.begin(), after_prompt.end(),
                          [](float x) { return std::isfinite(x); }));
}

TEST_P(LanguageModelTest, RestoredSnapshotContinuesLikeTheOriginal) {
  PrefillLast(1, {1, 30, 31});
  std::vector<uint8_t> snapshot;
  ASSERT_TRUE(states_->Save(1, &snapshot).ok());
  const std::vector<float> first = StepOne(1, 12);
  ASSERT_TRUE(states_->Reset(1).ok());
  ASSERT_TRUE(states_->Restore(3, snapshot).ok());
  EXPECT_EQ(states_->position(3), 3);
  EXPECT_EQ(StepOne(3, 12), first);
}

TEST_P(LanguageModelTest, ResetSlotStartsOver) {
  const std::vector<float> first = PrefillLast(0, {1, 2, 3, 4});
  StepOne(0, 5);
  ASSERT_TRUE(states_->Reset(0).ok());
  EXPECT_EQ(PrefillLast(0, {1, 2, 3, 4}), first);
}

TEST_P(LanguageModelTest, LongPrefillMatchesChunkedPrefill) {
  // Longer than one internal pass (except softmax, held to max_context), so the model's own
  // splitting is exercised too.
  const bool softmax = GetParam().kind == "softmax";
  const size_t chunk = softmax ? 4 : 100;
  std::vector<int32_t> prompt(softmax ? 12 : 300);
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int32_t>((i * 7 + 3) % kVocab);
  std::vector<float> whole(prompt.size() * kVocab);
  ASSERT_TRUE(model_->Prefill(*states_, 0, prompt, LogitsWanted::kEveryToken, whole).ok());
  std::vector<float> chunked(prompt.size() * kVocab);
  for (size_t first = 0; first < prompt.size(); first += chunk) {
    ASSERT_TRUE(model_
                    ->Prefill(*states_, 1, std::span(prompt).subspan(first, chunk),
                              LogitsWanted::kEveryToken,
                              std::span(chunked).subspan(first * kVocab, chunk * kVocab))
                    .ok());
  }
  float max_diff = 0;
  for (size_t i = 0; i < whole.size(); ++i)
    max_diff = std::max(max_diff, std::fabs(whole[i] - chunked[i]));
  EXPECT_LE(max_diff, 1e-4f);
  std::vector<float> last(kVocab);
  ASSERT_TRUE(model_->Prefill(*states_, 2, prompt, LogitsWanted::kLastToken, last).ok());
  for (int v = 0; v < kVocab; ++v)
    EXPECT_NEAR(last[v], whole[(prompt.size() - 1) * kVocab + v], 1e-4f);
}

std::vector<ModelCase> Cases() {
  std::vector<ModelCase> cases;
  for (const char* kind : {"abc", "rfa", "luna", "softmax"}) {
    for (kernels::Backend backend : {kernels::Backend::kReference, kernels::Backend::kCpu}) {
      cases.push_back({kind, backend});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(KindsAndBackends, LanguageModelTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) {
                           return info.param.kind + "_" + kernels::BackendName(info.param.backend);
                         });

}  // namespace
}  // namespace slotserve::models
