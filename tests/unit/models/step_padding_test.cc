// A decode step of B requests is padded to a bucket (1, 2, 4, 8, then multiples of 8: the batch
// sizes CUDA graphs are captured for) on every backend. The padded rows must not touch any
// request's slot: slots outside the batch keep their exact state and position, and each stepped
// request gets the logits and state it would get if stepped alone (a batch of 1 is never
// padded). Steps run twice per batch so that on cuda the second one replays the captured graph
// with fresh inputs.
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/language_model.h"
#include "tests/unit/kernels/test_backends.h"
#include "tests/unit/models/test_model_dir.h"

namespace slotserve::models {
namespace {

constexpr int kVocab = 40;  // SmallConfig's
constexpr int kSlots = 12;
constexpr int kStepsPerBatch = 2;
// Rows are computed independently on every backend, but a batched GEMM may sum in another
// order than a single-row one.
constexpr float kTolerance = 1e-5f;

struct PaddingCase {
  std::string kind;
  kernels::Backend backend;
};

void PrintTo(const PaddingCase& padding_case, std::ostream* out) {
  *out << padding_case.kind << "/" << kernels::BackendName(padding_case.backend);
}

int32_t PositionOf(const std::vector<uint8_t>& snapshot) {
  int32_t position;
  std::memcpy(&position, snapshot.data(), sizeof(position));
  return position;
}

std::vector<float> StateOf(const std::vector<uint8_t>& snapshot) {
  std::vector<float> state((snapshot.size() - sizeof(int32_t)) / sizeof(float));
  std::memcpy(state.data(), snapshot.data() + sizeof(int32_t), state.size() * sizeof(float));
  return state;
}

class StepPaddingTest : public ::testing::TestWithParam<PaddingCase> {
 protected:
  void SetUp() override {
    SLOTSERVE_SKIP_IF_UNAVAILABLE(GetParam().backend);
    testing::WriteModelDir(dir_.path(), testing::SmallConfig(GetParam().kind));
    auto model = LanguageModel::Load(dir_.path(), GetParam().backend);
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = *std::move(model);
  }

  // An arena whose every slot holds a different short prompt.
  std::unique_ptr<StateArena> PrefilledArena() {
    auto states = model_->AllocateStates(kSlots);
    EXPECT_TRUE(states.ok()) << states.status();
    if (!states.ok()) return nullptr;
    std::vector<float> logits(kVocab);
    for (int slot = 0; slot < kSlots; ++slot) {
      const std::vector<int32_t> prompt = {1 + slot, (5 * slot + 3) % kVocab, 7};
      const absl::Status status =
          model_->Prefill(**states, slot, prompt, LogitsWanted::kLastToken, logits);
      EXPECT_TRUE(status.ok()) << status;
    }
    return *std::move(states);
  }

  static std::map<int, std::vector<uint8_t>> Snapshots(const StateArena& states) {
    std::map<int, std::vector<uint8_t>> snapshots;
    for (int slot = 0; slot < kSlots; ++slot) {
      EXPECT_TRUE(states.Save(slot, &snapshots[slot]).ok());
    }
    return snapshots;
  }

  static int32_t TokenFor(int slot, int step) { return (11 * slot + 3 * step + 2) % kVocab; }

  // Steps `slots` together kStepsPerBatch times in one arena and, in a second arena, each slot
  // alone; compares logits, states and positions, and checks the other slots are untouched.
  void ExpectBatchEqualsSingleSteps(const std::vector<int32_t>& slots) {
    SCOPED_TRACE(::testing::Message() << "batch of " << slots.size());
    std::unique_ptr<StateArena> batched = PrefilledArena();
    std::unique_ptr<StateArena> single = PrefilledArena();
    ASSERT_TRUE(batched && single);
    const std::map<int, std::vector<uint8_t>> before = Snapshots(*batched);

    // All batched steps first: alternating arenas would drop the captured graphs every call.
    std::vector<std::vector<float>> batch_logits(kStepsPerBatch);
    for (int step = 0; step < kStepsPerBatch; ++step) {
      std::vector<int32_t> tokens;
      for (int32_t slot : slots) tokens.push_back(TokenFor(slot, step));
      batch_logits[step].resize(slots.size() * kVocab);
      const absl::Status status = model_->Step(*batched, slots, tokens, batch_logits[step]);
      ASSERT_TRUE(status.ok()) << status;
    }
    for (int step = 0; step < kStepsPerBatch; ++step) {
      for (size_t i = 0; i < slots.size(); ++i) {
        int32_t slot = slots[i];
        int32_t token = TokenFor(slot, step);
        std::vector<float> alone(kVocab);
        ASSERT_TRUE(model_->Step(*single, {&slot, 1}, {&token, 1}, alone).ok());
        for (int v = 0; v < kVocab; ++v) {
          ASSERT_NEAR(batch_logits[step][i * kVocab + v], alone[v], kTolerance)
              << "slot " << slot << " step " << step << " logit " << v;
        }
      }
    }

    const std::map<int, std::vector<uint8_t>> after = Snapshots(*batched);
    const std::map<int, std::vector<uint8_t>> expected = Snapshots(*single);
    const std::set<int32_t> stepped(slots.begin(), slots.end());
    for (int slot = 0; slot < kSlots; ++slot) {
      if (!stepped.count(slot)) {
        EXPECT_EQ(after.at(slot), before.at(slot)) << "slot " << slot << " was not in the batch";
        continue;
      }
      EXPECT_EQ(PositionOf(after.at(slot)), PositionOf(before.at(slot)) + kStepsPerBatch);
      const std::vector<float> got = StateOf(after.at(slot));
      const std::vector<float> want = StateOf(expected.at(slot));
      ASSERT_EQ(got.size(), want.size());
      for (size_t f = 0; f < got.size(); ++f) {
        ASSERT_NEAR(got[f], want[f], kTolerance) << "slot " << slot << " state float " << f;
      }
    }
  }

  testing::TempDir dir_;
  std::unique_ptr<LanguageModel> model_;
};

TEST_P(StepPaddingTest, ThreeRequestsPaddedToFour) { ExpectBatchEqualsSingleSteps({5, 1, 6}); }

TEST_P(StepPaddingTest, FiveRequestsPaddedToEightLeaveTheLastSlotsAlone) {
  ExpectBatchEqualsSingleSteps({0, 1, 2, 3, 4});
}

TEST_P(StepPaddingTest, TenRequestsPaddedToSixteenLeaveTheOtherSlotsAlone) {
  ExpectBatchEqualsSingleSteps({11, 0, 9, 2, 3, 4, 5, 6, 7, 1});
}

TEST_P(StepPaddingTest, BatchesOfEverySizeShareOneModel) {
  // Growing and shrinking batches on one model: scratch grows (dropping captured graphs on
  // cuda) and graphs of several sizes coexist.
  ExpectBatchEqualsSingleSteps({7});
  ExpectBatchEqualsSingleSteps({2, 7, 0, 5, 3, 6, 1});
  ExpectBatchEqualsSingleSteps({4, 2});
  ExpectBatchEqualsSingleSteps({0, 1, 2, 3, 4, 5, 6, 7});
}

std::vector<PaddingCase> Cases() {
  std::vector<PaddingCase> cases;
  for (const char* kind : {"abc", "rfa", "luna", "softmax"}) {
    for (kernels::Backend backend : kernels::testing::AllBackends()) {
      cases.push_back({kind, backend});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(KindsAndBackends, StepPaddingTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) {
                           return info.param.kind + "_" + kernels::BackendName(info.param.backend);
                         });

}  // namespace
}  // namespace slotserve::models
