// The C++ encoder–decoder model against the PyTorch reference's golden logits (docs/ARCHITECTURE.md
// "Tests"; docs/ARCHITECTURE.md "Encoder–decoder models"): every variant under
// tests/golden/seq2seq/ (written by make_golden_seq2seq.py: each cross kind, ConvLuna's filters,
// with abc and softmax decoder self-attention), on every host backend, with the decoder fed whole,
// in chunks and one step at a time, and after a fork of the slot.
#include <cmath>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "models/language_model.h"
#include "tests/golden/golden_data.h"
#include "tests/golden/seq2seq_golden_data.h"
#include "tests/golden/seq2seq_teacher_forced.h"

namespace slotserve::golden {
namespace {

constexpr float kTolerance = 1e-4f;

struct Case {
  std::string variant;
  kernels::Backend backend;
};

void PrintTo(const Case& test_case, std::ostream* os) {
  *os << test_case.variant << "/" << kernels::BackendName(test_case.backend);
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (const std::string& variant : GoldenVariants(Seq2seqGoldenDir())) {
    for (kernels::Backend backend :
         {kernels::Backend::kReference, kernels::Backend::kCpu, kernels::Backend::kCuda}) {
      cases.push_back({variant, backend});
    }
  }
  return cases;
}

class Seq2seqGoldenTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (GetParam().backend == kernels::Backend::kCuda && !kernels::CudaDeviceAvailable()) {
      GTEST_SKIP() << "no usable CUDA device";
    }
    const std::filesystem::path dir = Seq2seqGoldenDir() / GetParam().variant;
    golden_ = LoadSeq2seqGolden(dir);
    auto loaded = LoadSeq2seqUnderTest(dir, GetParam().backend, 3);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    model_ = std::move(loaded->model);
    states_ = std::move(loaded->states);
    inputs_ = DecoderInputs(golden_, model_->seq2seq()->decoder_start_id);
  }

  void ExpectRow(std::span<const float> logits, size_t t) {
    EXPECT_LE(MaxAbsDiff(logits, golden_.Row(t)), kTolerance) << "decoder position " << t;
  }

  // Encodes the golden source into `slot` and prefills the first half of the decoder inputs:
  // the common start of the fork and snapshot tests. Returns where the rest starts.
  size_t EncodeAndPrefillHalf(int slot) {
    EXPECT_TRUE(model_->Encode(*states_, slot, golden_.source).ok());
    const size_t half = inputs_.size() / 2;
    std::vector<float> logits(golden_.vocab_size);
    EXPECT_TRUE(model_
                    ->Prefill(*states_, slot, std::span<const int32_t>(inputs_).first(half),
                              models::LogitsWanted::kLastToken, logits)
                    .ok());
    return half;
  }

  Seq2seqGolden golden_;
  std::unique_ptr<models::LanguageModel> model_;
  std::unique_ptr<models::StateArena> states_;
  std::vector<int32_t> inputs_;
};

TEST_P(Seq2seqGoldenTest, DecoderPrefilledWholeMatchesTheReference) {
  const auto logits = Seq2seqWholeLogits(*model_, *states_, 1, golden_.source, inputs_);
  ASSERT_TRUE(logits.ok()) << logits.status();
  const int vocab = golden_.vocab_size;
  for (size_t t = 0; t < inputs_.size(); ++t) {
    ExpectRow(std::span<const float>(*logits).subspan(t * vocab, vocab), t);
  }
}

TEST_P(Seq2seqGoldenTest, DecoderPrefilledInChunksMatchesTheReference) {
  ASSERT_TRUE(model_->Encode(*states_, 0, golden_.source).ok());
  const int vocab = golden_.vocab_size;
  size_t fed = 0;
  for (const size_t chunk : {size_t{5}, size_t{1}, inputs_.size()}) {
    const size_t rows = std::min(chunk, inputs_.size() - fed);
    if (rows == 0) break;
    std::vector<float> logits(rows * vocab);
    ASSERT_TRUE(model_
                    ->Prefill(*states_, 0, std::span<const int32_t>(inputs_).subspan(fed, rows),
                              models::LogitsWanted::kEveryToken, logits)
                    .ok());
    for (size_t i = 0; i < rows; ++i) {
      ExpectRow(std::span<const float>(logits).subspan(i * vocab, vocab), fed + i);
    }
    fed += rows;
  }
  EXPECT_EQ(fed, inputs_.size());
}

// One token at a time through Step, two requests in one batch: slot 2 runs the golden source,
// slot 0 a different (shorter) source, so rows of one step read different cross memories.
TEST_P(Seq2seqGoldenTest, DecoderSteppedInABatchMatchesTheReference) {
  const auto logits = Seq2seqSteppedInABatchLogits(*model_, *states_, golden_.source, inputs_);
  ASSERT_TRUE(logits.ok()) << logits.status();
  const int vocab = golden_.vocab_size;
  for (size_t t = 0; t < inputs_.size(); ++t) {
    ExpectRow(std::span<const float>(*logits).subspan(t * vocab, vocab), t);
  }
}

// A slot copied mid-decode (a fork: beams, n > 1) continues exactly as the original, so the
// copy carries the cross memory, the source length and srformer's RAF state.
TEST_P(Seq2seqGoldenTest, AForkedSlotContinuesLikeTheOriginal) {
  const size_t half = EncodeAndPrefillHalf(0);
  std::vector<float> logits(golden_.vocab_size);
  ASSERT_TRUE(states_->Copy(0, 1).ok());
  ASSERT_TRUE(states_->Reset(0).ok());  // the original is gone; only the copy remains
  for (size_t t = half; t < inputs_.size(); ++t) {
    const std::vector<int32_t> slot = {1};
    const std::vector<int32_t> token = {inputs_[t]};
    ASSERT_TRUE(model_->Step(*states_, slot, token, logits).ok());
    ExpectRow(logits, t);
  }
}

// Beams of one request (docs/ARCHITECTURE.md "Encoder–decoder models"): forks share the request's
// one cross memory, each keeps its own decoder state (and srformer RAF state), so a sibling fed
// other tokens changes nothing the golden hypothesis reads; the memory goes back when the last
// reader lets go.
TEST_P(Seq2seqGoldenTest, ForkedHypothesesShareOneCrossMemory) {
  const size_t half = EncodeAndPrefillHalf(0);
  const int vocab = golden_.vocab_size;
  std::vector<float> logits(2 * vocab);
  ASSERT_TRUE(states_->Copy(0, 1).ok());
  ASSERT_TRUE(states_->Copy(0, 2).ok());
  EXPECT_EQ(states_->shared_block(1), states_->shared_block(0));
  EXPECT_EQ(states_->shared_block(2), states_->shared_block(0));
  EXPECT_EQ(states_->free_shared_blocks(), states_->shared_block_count() - 1);
  ASSERT_TRUE(states_->Reset(0).ok());
  for (size_t t = half; t < inputs_.size(); ++t) {
    const std::vector<int32_t> slots = {2, 1};
    // Slot 2 is fed a different token each step (another hypothesis).
    const std::vector<int32_t> tokens = {static_cast<int32_t>((inputs_[t] + 1 + t) % vocab),
                                         inputs_[t]};
    ASSERT_TRUE(model_->Step(*states_, slots, tokens, logits).ok());
    ExpectRow(std::span<const float>(logits).subspan(vocab, vocab), t);
  }
  ASSERT_TRUE(states_->Reset(1).ok());
  EXPECT_EQ(states_->free_shared_blocks(), states_->shared_block_count() - 1);  // 2 reads it
  ASSERT_TRUE(states_->Reset(2).ok());
  EXPECT_EQ(states_->free_shared_blocks(), states_->shared_block_count());
}

// A snapshot (sessions, export) carries the cross memory: restored after the block it came
// from was reused for another source, the slot continues as the original.
TEST_P(Seq2seqGoldenTest, ARestoredSnapshotBringsItsCrossMemory) {
  const size_t half = EncodeAndPrefillHalf(0);
  std::vector<float> logits(golden_.vocab_size);
  std::vector<uint8_t> snapshot;
  ASSERT_TRUE(states_->Save(0, &snapshot).ok());
  EXPECT_EQ(static_cast<int64_t>(snapshot.size()),
            static_cast<int64_t>(sizeof(int32_t)) + model_->state_bytes_per_request());
  const std::vector<int32_t> other_source(golden_.source.begin(), golden_.source.begin() + 2);
  ASSERT_TRUE(model_->Encode(*states_, 0, other_source).ok());  // reuses the freed block
  ASSERT_TRUE(states_->Restore(2, snapshot).ok());
  EXPECT_NE(states_->shared_block(2), states_->shared_block(0));
  for (size_t t = half; t < inputs_.size(); ++t) {
    const std::vector<int32_t> slot = {2};
    const std::vector<int32_t> token = {inputs_[t]};
    ASSERT_TRUE(model_->Step(*states_, slot, token, logits).ok());
    ExpectRow(logits, t);
  }
}

TEST_P(Seq2seqGoldenTest, DecodingASlotWithoutASourceIsRefused) {
  const int vocab = golden_.vocab_size;
  std::vector<float> logits(vocab);
  const std::vector<int32_t> first = {inputs_[0]};
  const absl::Status prefill =
      model_->Prefill(*states_, 1, first, models::LogitsWanted::kLastToken, logits);
  EXPECT_EQ(prefill.code(), absl::StatusCode::kFailedPrecondition) << prefill;
  EXPECT_NE(prefill.message().find("slot 1 holds no source"), std::string::npos) << prefill;
  const std::vector<int32_t> slot = {1};
  const absl::Status step = model_->Step(*states_, slot, first, logits);
  EXPECT_EQ(step.code(), absl::StatusCode::kFailedPrecondition) << step;
}

TEST_P(Seq2seqGoldenTest, EncodeRefusesSourcesItCannotHold) {
  const std::vector<int32_t> empty;
  absl::Status status = model_->Encode(*states_, 0, empty);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("source of 0 tokens"), std::string::npos) << status;
  const int limit = model_->seq2seq()->max_source_tokens;
  const std::vector<int32_t> too_long(limit + 1, 3);
  status = model_->Encode(*states_, 0, too_long);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find(absl::StrCat("source of ", limit + 1, " tokens")),
            std::string::npos)
      << status;
  // An id out of range is the engine entry's to refuse (source_ids[i], engine/
  // source_validation.cc); below it the model's guard says INTERNAL and reads no embedding row.
  const std::vector<int32_t> outside = {1, golden_.vocab_size, 2};
  status = model_->Encode(*states_, 0, outside);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_NE(
      status.message().find(absl::StrCat("Encode: token ", golden_.vocab_size,
                                         " at index 1 is outside [0, ", golden_.vocab_size, ")")),
      std::string::npos)
      << status;
}

TEST_P(Seq2seqGoldenTest, StateBytesAreTheDecoderAndCrossParts) {
  const models::Seq2seqShape& shape = *model_->seq2seq();
  EXPECT_GT(shape.decoder_state_bytes, 0);
  EXPECT_GT(shape.cross_memory_bytes, 0);
  EXPECT_EQ(model_->state_bytes_per_request(),
            shape.decoder_state_bytes + shape.cross_memory_bytes);
  EXPECT_EQ(states_->snapshot_state_bytes(), model_->state_bytes_per_request());
}

INSTANTIATE_TEST_SUITE_P(Variants, Seq2seqGoldenTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return absl::StrCat(info.param.variant, "_",
                                               kernels::BackendName(info.param.backend));
                         });

}  // namespace
}  // namespace slotserve::golden
