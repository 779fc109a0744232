// Hand-computed cases for the reference attention kernels, where an independent closed form
// exists, and checks that the reference writes the state layout its header documents (the
// layout the cpu and cuda backends must share, since a state is copied between them as bytes).
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/abc_attention.h"
#include "kernels/luna_attention.h"
#include "kernels/rfa_attention.h"
#include "kernels/softmax_attention.h"
#include "tests/unit/kernels/test_data.h"

namespace slotserve::kernels::testing {
namespace {

constexpr int kHeads = 2;
constexpr int kDim = 3;  // head_dim
constexpr int kModel = kHeads * kDim;

// One request's state for one layer, in a single-slot arena.
struct OneSlot {
  explicit OneSlot(int64_t floats) : state(floats, 0.0f) {}
  PrefillTarget Target(int start_position) {
    PrefillTarget target;
    target.state.pool = state.data();
    target.state.slot_stride = static_cast<int64_t>(state.size());
    target.start_position = start_position;
    return target;
  }
  std::vector<float> state;
};

std::vector<float> Row(const std::vector<float>& m, int row, int cols) {
  return std::vector<float>(m.begin() + row * cols, m.begin() + (row + 1) * cols);
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want, double tolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tolerance) << i;
}

// ---------------------------------------------------------------------------------------- ABC

TEST(AbcReferenceTest, FirstTokenOutputIsItsValueAndStateHoldsIt) {
  // From an empty state every memory row of K̄ is k and of V̄ is v, so out = v whatever q is;
  // z = 1 and m = the row's memory logit in every row.
  const int memory_rows = 4;
  const auto q = RandomFloats(kModel, 1), k = RandomFloats(kModel, 2), v = RandomFloats(kModel, 3);
  const auto logits = RandomFloats(kHeads * memory_rows, 4, -3.0f, 3.0f);
  std::vector<float> out(kModel);
  OneSlot slot(AbcStateFloatsPerLayer(kHeads, kDim, memory_rows));
  AbcParams p{1,        kHeads,  kDim,   memory_rows, q.data(), k.data(),
              v.data(), nullptr, kModel, out.data(),  kModel};
  // memory logits have their own input row here: stride kModel covers both (one row only).
  p.memory_logits = logits.data();
  LaunchAbcPrefill(Backend::kReference, p, slot.Target(0));
  ExpectNear(out, v, 1e-6);
  const int head_floats = 2 * memory_rows * kDim + 2 * memory_rows;
  for (int h = 0; h < kHeads; ++h) {
    const float* base = slot.state.data() + h * head_floats;
    for (int j = 0; j < memory_rows; ++j) {
      for (int i = 0; i < kDim; ++i) {
        EXPECT_FLOAT_EQ(base[j * kDim + i], k[h * kDim + i]);                       // K~
        EXPECT_FLOAT_EQ(base[memory_rows * kDim + j * kDim + i], v[h * kDim + i]);  // V~
      }
      EXPECT_FLOAT_EQ(base[2 * memory_rows * kDim + j], 1.0f);  // z
      EXPECT_FLOAT_EQ(base[2 * memory_rows * kDim + memory_rows + j],
                      logits[h * memory_rows + j]);  // m
    }
  }
}

TEST(AbcReferenceTest, EqualMemoryLogitsGiveSoftmaxWeightedValueAverage) {
  // When all M memory rows see the same logit s_t, every row holds the same exp(s)-weighted mean
  // of the keys and values, attention over identical rows is uniform, and
  // out = sum_t e^{s_t} v_t / sum_t e^{s_t}.
  const int memory_rows = 3;
  const int rows = 3;
  const int stride = 3 * kModel + kHeads * memory_rows;
  auto inputs = RandomFloats(rows * stride, 5);
  const float s[rows] = {0.5f, -1.0f, 2.0f};
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < kHeads * memory_rows; ++c) inputs[r * stride + 3 * kModel + c] = s[r];
  }
  std::vector<float> out(rows * kModel);
  OneSlot slot(AbcStateFloatsPerLayer(kHeads, kDim, memory_rows));
  const float* base = inputs.data();
  AbcParams p{rows,
              kHeads,
              kDim,
              memory_rows,
              base,
              base + kModel,
              base + 2 * kModel,
              base + 3 * kModel,
              stride,
              out.data(),
              kModel};
  LaunchAbcPrefill(Backend::kReference, p, slot.Target(0));
  for (int c = 0; c < kModel; ++c) {
    double numerator = 0, denominator = 0;
    for (int r = 0; r < rows; ++r) {
      numerator += std::exp(s[r]) * inputs[r * stride + 2 * kModel + c];
      denominator += std::exp(s[r]);
    }
    EXPECT_NEAR(out[(rows - 1) * kModel + c], numerator / denominator, 1e-6) << c;
  }
}

// ---------------------------------------------------------------------------------------- RFA

// One token with q == k (both `qk`), eps 1, no gate, concat order.
RfaParams RfaQueryEqualsKey(int features, const std::vector<float>& qk, const std::vector<float>& v,
                            const std::vector<float>& projection, std::vector<float>& out) {
  RfaParams p;
  p.rows = 1;
  p.heads = kHeads;
  p.head_dim = kDim;
  p.features = features;
  p.q = qk.data();
  p.k = qk.data();
  p.v = v.data();
  p.in_stride = kModel;
  p.projection = projection.data();
  p.eps = 1.0f;
  p.out = out.data();
  p.out_stride = kModel;
  return p;
}

TEST(RfaReferenceTest, FirstTokenWithQueryEqualToKeyReturnsValue) {
  // phi(q) . phi(k) = scale^2 * sum_f (sin^2 + cos^2) = scale^2 * D when q == k, so from an
  // empty state out = phi(q).phi(k) v / max(phi(q).phi(k), eps) = v when scale^2 D >= eps,
  // with or without the gate (the gate scales numerator and denominator alike).
  const int features = 4;
  const auto qk = RandomFloats(kModel, 6);
  const auto v = RandomFloats(kModel, 7);
  const auto projection = RandomFloats(kHeads * features * kDim, 8, -2.0f, 2.0f);
  const std::vector<float> gate_logits = {0.0f, 0.0f};  // g = 0.5: (1 - g) scale^2 D = 2 >= eps
  for (bool gated : {false, true}) {
    for (bool interleave : {false, true}) {
      std::vector<float> out(kModel);
      OneSlot slot(RfaStateFloatsPerLayer(kHeads, kDim, features));
      RfaParams p = RfaQueryEqualsKey(features, qk, v, projection, out);
      p.gate_logits = gated ? gate_logits.data() : nullptr;
      p.feature_scale = 1.0f;
      p.interleave = interleave;
      LaunchRfaPrefill(Backend::kReference, p, slot.Target(0));
      ExpectNear(out, v, 1e-6);
      // z = (1 - g) phi(k); in "concat" order z[f] and z[D + f] are sin and cos of one angle.
      const double add = gated ? 0.5 : 1.0;
      const float* z = slot.state.data() + 2 * features * kDim;  // head 0
      for (int f = 0; f < features; ++f) {
        const double sin_f = z[interleave ? 2 * f : f] / add;
        const double cos_f = z[interleave ? 2 * f + 1 : features + f] / add;
        EXPECT_NEAR(sin_f * sin_f + cos_f * cos_f, 1.0, 1e-6) << f;
      }
    }
  }
}

TEST(RfaReferenceTest, DenominatorIsClampedAtEps) {
  // feature_scale tiny: phi(q).z = scale^2 D << eps, so out = scale^2 D v / eps.
  const int features = 2;
  const auto qk = RandomFloats(kModel, 9);
  const auto v = RandomFloats(kModel, 10);
  const auto projection = RandomFloats(kHeads * features * kDim, 11);
  std::vector<float> out(kModel);
  OneSlot slot(RfaStateFloatsPerLayer(kHeads, kDim, features));
  RfaParams p = RfaQueryEqualsKey(features, qk, v, projection, out);
  p.feature_scale = 0.1f;
  LaunchRfaPrefill(Backend::kReference, p, slot.Target(0));
  std::vector<float> want(kModel);
  for (int c = 0; c < kModel; ++c) want[c] = 0.01f * features * v[c];
  ExpectNear(out, want, 1e-6);
}

// --------------------------------------------------------------------------------------- Luna

TEST(LunaReferenceTest, ZeroPcGivesMeanOfValues) {
  // pc = 0: p_t = act(0) = 1 for every l (both activations), so A = (sum k) (x) 1 and
  // C = 1 (x) (sum v); attention over identical columns is uniform and out = sum_t v_t / t.
  const int length = 3;
  const int rows = 3;
  const int stride = 4 * kModel;
  auto inputs = RandomFloats(rows * stride, 12);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < kModel; ++c) inputs[r * stride + 3 * kModel + c] = 0.0f;
  }
  const auto pq = RandomFloats(length * kModel, 13);
  for (LunaActivation activation : {LunaActivation::kSoftplus, LunaActivation::kElu1}) {
    std::vector<float> out(rows * kModel);
    OneSlot slot(LunaStateFloatsPerLayer(kHeads, kDim, length));
    const float* base = inputs.data();
    LunaParams p{rows,
                 kHeads,
                 kDim,
                 length,
                 base,
                 base + kModel,
                 base + 2 * kModel,
                 base + 3 * kModel,
                 stride,
                 pq.data(),
                 activation,
                 out.data(),
                 kModel};
    LaunchLunaPrefill(Backend::kReference, p, slot.Target(0));
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < kModel; ++c) {
        double sum = 0;
        for (int s = 0; s <= r; ++s) sum += inputs[s * stride + 2 * kModel + c];
        EXPECT_NEAR(out[r * kModel + c], sum / (r + 1), 1e-6) << r << "," << c;
      }
    }
    // State layout: A [d x L] holds sum_t k_t[i] * p_t[l] = sum_t k_t[i].
    for (int i = 0; i < kDim; ++i) {
      double sum_k = 0;
      for (int s = 0; s < rows; ++s) sum_k += inputs[s * stride + kModel + i];
      for (int l = 0; l < length; ++l) EXPECT_NEAR(slot.state[i * length + l], sum_k, 1e-6);
    }
  }
}

TEST(LunaReferenceTest, ActivationsAtKnownPoints) {
  // One token, d = 1, L = 1: p = act(pc * pq); A = k p, C = p v; the softmax over one column
  // is 1, so out = p v. Softplus with beta = ln 2 at u is log2(1 + 2^u); elu(u) + 1.
  struct Case {
    LunaActivation activation;
    float u;
    double want_p;
  };
  for (const Case& c :
       {Case{LunaActivation::kSoftplus, 0.0f, 1.0},
        Case{LunaActivation::kSoftplus, 3.0f, std::log2(9.0)},
        Case{LunaActivation::kSoftplus, -2.0f, std::log2(1.25)},
        Case{LunaActivation::kSoftplus, 200.0f, 200.0}, Case{LunaActivation::kElu1, 0.5f, 1.5},
        Case{LunaActivation::kElu1, -1.0f, std::exp(-1.0)}}) {
    const std::vector<float> q = {0.3f}, k = {0.7f}, v = {2.0f}, pc = {c.u}, pq = {1.0f};
    float out = 0;
    std::vector<float> state(2, 0.0f);
    LunaParams p{1,    1, 1, 1, q.data(), k.data(), v.data(), pc.data(), 1, pq.data(), c.activation,
                 &out, 1};
    PrefillTarget target;
    target.state.pool = state.data();
    target.state.slot_stride = 2;
    LaunchLunaPrefill(Backend::kReference, p, target);
    EXPECT_NEAR(out, c.want_p * 2.0, 1e-5 * c.want_p) << c.u;
  }
}

// ------------------------------------------------------------------------------------ softmax

TEST(SoftmaxAttentionReferenceTest, TwoTokensByHand) {
  // Token 0 sees only itself (out = v0); token 1 mixes v0, v1 with softmax(q1.k / sqrt(d)).
  const int max_context = 4;
  const int stride = 3 * kModel;
  const auto inputs = RandomFloats(2 * stride, 14);
  std::vector<float> out(2 * kModel);
  OneSlot slot(SoftmaxStateFloatsPerLayer(kHeads, kDim, max_context));
  const float* base = inputs.data();
  SoftmaxAttentionParams p{
      2,      kHeads,     kDim,  max_context, base, base + kModel, base + 2 * kModel,
      stride, out.data(), kModel};
  LaunchSoftmaxAttentionPrefill(Backend::kReference, p, slot.Target(0));
  ExpectNear(Row(out, 0, kModel), std::vector<float>(base + 2 * kModel, base + 3 * kModel), 1e-6);
  for (int h = 0; h < kHeads; ++h) {
    double score[2];
    for (int s = 0; s < 2; ++s) {
      double dot = 0;
      for (int i = 0; i < kDim; ++i) {
        dot += inputs[stride + h * kDim + i] * inputs[s * stride + kModel + h * kDim + i];
      }
      score[s] = std::exp(dot / std::sqrt(static_cast<double>(kDim)));
    }
    for (int i = 0; i < kDim; ++i) {
      const int c = h * kDim + i;
      const double want =
          (score[0] * inputs[2 * kModel + c] + score[1] * inputs[stride + 2 * kModel + c]) /
          (score[0] + score[1]);
      EXPECT_NEAR(out[kModel + c], want, 1e-6) << c;
    }
  }
  // The cache holds k at row p of K, then V after max_context rows.
  for (int c = 0; c < kModel; ++c) {
    EXPECT_EQ(slot.state[kModel + c], inputs[stride + kModel + c]);
    EXPECT_EQ(slot.state[max_context * kModel + c], inputs[2 * kModel + c]);
  }
}

}  // namespace
}  // namespace slotserve::kernels::testing
