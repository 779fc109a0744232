// The engine's int8 activations (--int8-activations) on encoder-decoder models against the
// PyTorch reference (python/slotserve_ref/int8_activations.py on a Seq2seqModel): the *_int8
// seq2seq variants' logits with every matrix product's input rounded to int8 per block of 32
// (golden_logits_int8_activations.f32: the encoder, the cross memory's projections, the decoder
// and the output layer), on the reference and cpu backends, the decoder fed whole and one token
// per step in a shared batch.
//
// The bar is seq2seq_golden_test.cc's 1e-4; the exact-weights logits are 0.036 and 0.17 away
// (make_golden_seq2seq.py prints it), so a backend that ignored the flag fails.
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "models/int8_activations.h"
#include "models/language_model.h"
#include "tests/golden/golden_data.h"
#include "tests/golden/seq2seq_golden_data.h"
#include "tests/golden/seq2seq_teacher_forced.h"

namespace slotserve::golden {
namespace {

constexpr float kTolerance = 1e-4f;
constexpr char kInt8ActivationsLogits[] = "golden_logits_int8_activations.f32";

struct Int8Case {
  std::string variant;
  kernels::Backend backend;
};

void PrintTo(const Int8Case& c, std::ostream* out) {
  *out << c.variant << "/" << kernels::BackendName(c.backend);
}

class Seq2seqInt8ActivationsGoldenTest : public ::testing::TestWithParam<Int8Case> {
 protected:
  void SetUp() override {
    const std::filesystem::path dir = Seq2seqGoldenDir() / GetParam().variant;
    golden_ = LoadSeq2seqGolden(dir, kInt8ActivationsLogits);
    exact_ = LoadSeq2seqGolden(dir);
    models::SetInt8Activations(true);  // read at load (the packed copies) and at every product
    auto loaded = LoadSeq2seqUnderTest(dir, GetParam().backend, 3);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    model_ = std::move(loaded->model);
    states_ = std::move(loaded->states);
    inputs_ = DecoderInputs(golden_, model_->seq2seq()->decoder_start_id);
  }
  void TearDown() override { models::SetInt8Activations(false); }

  void ExpectRow(std::span<const float> logits, size_t t) {
    EXPECT_LE(MaxAbsDiff(logits, golden_.Row(t)), kTolerance) << "decoder position " << t;
    // The flag took effect: nearer the int8-activation reference than the exact-weights one.
    EXPECT_GT(MaxAbsDiff(logits, exact_.Row(t)), MaxAbsDiff(logits, golden_.Row(t)))
        << "decoder position " << t;
  }

  void ExpectRows(std::span<const float> logits) {
    const int vocab = golden_.vocab_size;
    for (size_t t = 0; t < inputs_.size(); ++t) ExpectRow(logits.subspan(t * vocab, vocab), t);
  }

  Seq2seqGolden golden_;
  Seq2seqGolden exact_;
  std::unique_ptr<models::LanguageModel> model_;
  std::unique_ptr<models::StateArena> states_;
  std::vector<int32_t> inputs_;
};

TEST_P(Seq2seqInt8ActivationsGoldenTest, TheTwoReferencesAreFarApart) {
  EXPECT_GE(MaxAbsDiff(golden_.logits, exact_.logits), 100 * kTolerance);
}

TEST_P(Seq2seqInt8ActivationsGoldenTest, DecoderPrefilledWhole) {
  const auto logits = Seq2seqWholeLogits(*model_, *states_, 1, golden_.source, inputs_);
  ASSERT_TRUE(logits.ok()) << logits.status();
  ExpectRows(*logits);
}

// Rows are quantised one by one, so a batch neighbour with another source changes nothing.
TEST_P(Seq2seqInt8ActivationsGoldenTest, DecoderSteppedInABatch) {
  const auto logits = Seq2seqSteppedInABatchLogits(*model_, *states_, golden_.source, inputs_);
  ASSERT_TRUE(logits.ok()) << logits.status();
  ExpectRows(*logits);
}

std::vector<Int8Case> Cases() {
  std::vector<Int8Case> cases;
  for (const std::string& variant : GoldenVariants(Seq2seqGoldenDir())) {
    if (!std::filesystem::exists(Seq2seqGoldenDir() / variant / kInt8ActivationsLogits)) continue;
    for (kernels::Backend backend : {kernels::Backend::kReference, kernels::Backend::kCpu}) {
      cases.push_back({variant, backend});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Variants, Seq2seqInt8ActivationsGoldenTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) {
                           return info.param.variant + "_" +
                                  kernels::BackendName(info.param.backend);
                         });

}  // namespace
}  // namespace slotserve::golden
