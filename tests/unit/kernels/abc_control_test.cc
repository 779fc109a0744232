// The equivalences docs/ABC_CONTROLS.md states for ABC's memory controls, on every backend,
// each checked against a different kernel (the property and reference tests of every control
// are attention_test.cc's):
//   window with M >= the context   == causal softmax attention (the softmax kernel);
//   window with M < the context    == softmax attention over each token's last M tokens
//                                     (the softmax kernel run afresh on each window);
//   compressive with stride 1      == window, for contexts up to M;
//   relu with every logit <= 0     writes nothing: the output is 0.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/kernels/attention_harness.h"
#include "tests/unit/kernels/test_backends.h"
#include "tests/unit/kernels/test_data.h"

namespace slotserve::kernels::testing {
namespace {

constexpr int kHeads = 3;
constexpr int kHeadDim = 5;
constexpr int kTokens = 30;

AttentionVariant Control(AbcControl control, int memory_rows, int stride = 1) {
  AttentionVariant v{"control", AttentionKind::kAbcControl, kHeads, kHeadDim, memory_rows};
  v.abc_control = control;
  v.abc_stride = stride;
  return v;
}

AttentionVariant Softmax(int max_context) {
  return {"softmax", AttentionKind::kSoftmax, kHeads, kHeadDim, max_context};
}

// The [rows, out_stride] outputs of prefilling `inputs` (rows of `layer`'s layout) into a
// fresh slot, in chunks of `chunk`.
std::vector<float> PrefillFresh(const AttentionLayer& layer, const std::vector<float>& inputs,
                                int rows, int chunk) {
  TestArena arena(layer.backend(), 2, StateFloatsPerLayer(layer.variant()));
  std::vector<float> out;
  for (int first = 0; first < rows; first += chunk) {
    const int count = std::min(chunk, rows - first);
    const std::vector<float> part = RunPrefill(layer, arena, inputs, first, count, 1, first);
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

class AbcControlEquivalenceTest : public ::testing::TestWithParam<Backend> {};

TEST_P(AbcControlEquivalenceTest, WindowHoldingTheWholeContextIsSoftmaxAttention) {
  SLOTSERVE_SKIP_IF_UNAVAILABLE(GetParam());
  const AttentionLayer window(Control(AbcControl::kWindow, kTokens), GetParam());
  const AttentionLayer softmax(Softmax(kTokens), GetParam());
  ASSERT_EQ(window.in_stride(), softmax.in_stride());  // [q | k | v | padding] for both
  const std::vector<float> inputs = window.RandomInputs(kTokens, 31);
  ExpectAllClose(PrefillFresh(window, inputs, kTokens, 7),
                 PrefillFresh(softmax, inputs, kTokens, 7), DefaultTolerance(GetParam()),
                 "window M = 30 vs softmax over 30 tokens");
}

TEST_P(AbcControlEquivalenceTest, ShortWindowIsSoftmaxOverEachTokensLastMTokens) {
  SLOTSERVE_SKIP_IF_UNAVAILABLE(GetParam());
  constexpr int kWindow = 6;
  const AttentionLayer window(Control(AbcControl::kWindow, kWindow), GetParam());
  const AttentionLayer softmax(Softmax(kWindow), GetParam());
  const std::vector<float> inputs = window.RandomInputs(kTokens, 32);
  const std::vector<float> got = PrefillFresh(window, inputs, kTokens, 4);
  const int64_t in_stride = window.in_stride();
  const int64_t out_stride = window.out_stride();
  for (int t = 0; t < kTokens; ++t) {
    // Softmax attention over tokens [first, t] alone: its last output row is token t's.
    const int first = std::max(0, t - kWindow + 1);
    const std::vector<float> tokens(inputs.begin() + first * in_stride,
                                    inputs.begin() + (t + 1) * in_stride);
    const std::vector<float> alone = PrefillFresh(softmax, tokens, t - first + 1, kWindow);
    const std::vector<float> want(alone.end() - out_stride, alone.end());
    const std::vector<float> row(got.begin() + t * out_stride, got.begin() + (t + 1) * out_stride);
    ExpectAllClose(row, want, DefaultTolerance(GetParam()), "token " + std::to_string(t));
    if (HasFailure()) return;
  }
}

TEST_P(AbcControlEquivalenceTest, CompressiveWithStrideOneIsWindow) {
  SLOTSERVE_SKIP_IF_UNAVAILABLE(GetParam());
  constexpr int kRows = 12;
  const AttentionLayer compressive(Control(AbcControl::kCompressive, kRows, 1), GetParam());
  const AttentionLayer window(Control(AbcControl::kWindow, kRows), GetParam());
  const std::vector<float> inputs = window.RandomInputs(kRows, 33);
  ExpectAllClose(PrefillFresh(compressive, inputs, kRows, 5),
                 PrefillFresh(window, inputs, kRows, 5), DefaultTolerance(GetParam()),
                 "compressive c = 1 vs window, 12 tokens");
}

TEST_P(AbcControlEquivalenceTest, ReluWithNoPositiveLogitWritesNothing) {
  SLOTSERVE_SKIP_IF_UNAVAILABLE(GetParam());
  const AttentionVariant variant = Control(AbcControl::kRelu, 4);
  const AttentionLayer relu(variant, GetParam());
  std::vector<float> inputs = relu.RandomInputs(5, 34);
  const int model_dim = kHeads * kHeadDim;
  for (int r = 0; r < 5; ++r) {  // memory logits <= 0: alpha = 0 everywhere, z stays 0
    for (int c = 0; c < kHeads * 4; ++c) {
      float& logit = inputs[r * relu.in_stride() + 3 * model_dim + c];
      logit = -std::abs(logit);
    }
  }
  const std::vector<float> out = PrefillFresh(relu, inputs, 5, 5);
  for (int r = 0; r < 5; ++r) {
    for (int c = 0; c < model_dim; ++c) {
      EXPECT_EQ(out[r * relu.out_stride() + c], 0.0f) << "row " << r << " column " << c;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, AbcControlEquivalenceTest, ::testing::ValuesIn(AllBackends()),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return std::string(BackendName(info.param));
                         });

}  // namespace
}  // namespace slotserve::kernels::testing
