// cpu GSA (kernels/gsa_attention.h). The unit of work is one token of one kv head: its state
// (dk*M + M*dv floats, 256 KiB for dk = dv = 512, M = 64) is updated and read by every query
// head of its group in a single pass, row by row, each row used while it is still in L1:
//   hk row d:  hk[d, :] = decay * hk[d, :] + k[d] s,   then scores_h += q_h[d] hk[d, :]
//   hv row m:  hv[m, :] = decay[m] hv[m, :] + s[m] v,  then out_h += p_h[m] hv[m, :]
// Prefill scans the chunk's tokens in order, one kv head per task (kv heads are independent);
// step splits the (request, kv head) pairs.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/parallel_for.h"
#include "kernels/cpu/row_products.h"
#include "kernels/cpu/vector_ops.h"
#include "kernels/gsa_attention.h"
#include "kernels/reference/host_access.h"

namespace slotserve::kernels {
namespace {

// Per-task scratch: the token's features and gates, and the group's queries and scores.
struct GsaScratch {
  std::vector<float> k, v, decay, write, q, scores;
  explicit GsaScratch(const GsaParams& p)
      : k(p.key_dim),
        v(p.value_dim),
        decay(p.memory_rows),
        write(p.memory_rows),
        q(static_cast<size_t>(p.heads / p.kv_heads) * p.key_dim),
        scores(static_cast<size_t>(p.heads / p.kv_heads) * p.memory_rows) {}
};

inline float Silu(float x) { return x / (1.0f + std::exp(-x)); }

// phi of one head's dk raw values into `phi`.
void FeatureMap(const GsaParams& p, const float* __restrict x, float* __restrict phi) {
  const int dk = p.key_dim;
  switch (p.feature_map) {
    case GsaFeatureMap::kSwish:
      for (int i = 0; i < dk; ++i) phi[i] = Silu(x[i]);
      return;
    case GsaFeatureMap::kRelu:
      for (int i = 0; i < dk; ++i) phi[i] = std::max(0.0f, x[i]);
      return;
    case GsaFeatureMap::kT2r:  // relu(x W^T): output i is row i of W dotted with x
      cpu::DotRows(x, p.t2r_weight, dk, dk, dk, phi);
      for (int i = 0; i < dk; ++i) phi[i] = std::max(0.0f, phi[i]);
      return;
  }
}

// row = decay * row + scale * write, elementwise over the M slots (one hk row).
inline void DecayWriteRow(const float* __restrict decay, const float* __restrict write, float scale,
                          float* __restrict row, int n) {
  for (int i = 0; i < n; ++i) row[i] = decay[i] * row[i] + scale * write[i];
}

// Absorbs input row `row` into kv head g's state and writes the outputs of its query heads.
void GsaKvHeadToken(const GsaParams& p, int row, int g, float* kv_state, GsaScratch& s) {
  const int dk = p.key_dim;
  const int dv = p.value_dim;
  const int memory_rows = p.memory_rows;
  const int group = p.heads / p.kv_heads;
  const int64_t in_row = static_cast<int64_t>(row) * p.in_stride;
  float* hk = kv_state;                                           // [dk x M]
  float* hv = kv_state + static_cast<int64_t>(dk) * memory_rows;  // [M x dv]

  FeatureMap(p, p.k + in_row + static_cast<int64_t>(g) * dk, s.k.data());
  const float* v_raw = p.v + in_row + static_cast<int64_t>(g) * dv;
  for (int j = 0; j < dv; ++j) s.v[j] = Silu(v_raw[j]);
  const float* logits = p.forget_logits + in_row + static_cast<int64_t>(g) * memory_rows;
  const float inv_normalizer = 1.0f / p.gate_logit_normalizer;
  for (int m = 0; m < memory_rows; ++m) {
    // Stable logsigmoid; s = -expm1(f) keeps the small writes of gates close to 1 accurate.
    const float x = logits[m];
    const float f = (std::min(0.0f, x) - std::log1p(std::exp(-std::abs(x)))) * inv_normalizer;
    s.decay[m] = std::exp(f);
    s.write[m] = -std::expm1(f);
  }
  for (int i = 0; i < group; ++i) {
    FeatureMap(p, p.q + in_row + static_cast<int64_t>(g * group + i) * dk,
               s.q.data() + static_cast<size_t>(i) * dk);
  }

  std::fill(s.scores.begin(), s.scores.end(), 0.0f);
  for (int d = 0; d < dk; ++d) {
    float* hk_row = hk + static_cast<int64_t>(d) * memory_rows;
    DecayWriteRow(s.decay.data(), s.write.data(), s.k[d], hk_row, memory_rows);
    for (int i = 0; i < group; ++i) {
      cpu::Axpy(s.q[static_cast<size_t>(i) * dk + d], hk_row,
                s.scores.data() + static_cast<size_t>(i) * memory_rows, memory_rows);
    }
  }
  for (int i = 0; i < group; ++i) {
    cpu::SoftmaxInPlace(s.scores.data() + static_cast<size_t>(i) * memory_rows, memory_rows);
  }

  float* out =
      p.out + static_cast<int64_t>(row) * p.out_stride + static_cast<int64_t>(g) * group * dv;
  std::fill(out, out + static_cast<int64_t>(group) * dv, 0.0f);
  for (int m = 0; m < memory_rows; ++m) {
    float* hv_row = hv + static_cast<int64_t>(m) * dv;
    cpu::DecayAxpy(s.decay[m], s.write[m], s.v.data(), hv_row, dv);
    for (int i = 0; i < group; ++i) {
      cpu::Axpy(s.scores[static_cast<size_t>(i) * memory_rows + m], hv_row,
                out + static_cast<int64_t>(i) * dv, dv);
    }
  }
}

// Multiply-adds of one (token, kv head), for ParallelFor's decision to split.
int64_t TokenWork(const GsaParams& p) {
  const int64_t group = p.heads / p.kv_heads;
  const int64_t state = static_cast<int64_t>(p.memory_rows) * (p.key_dim + p.value_dim);
  const int64_t t2r = p.feature_map == GsaFeatureMap::kT2r
                          ? static_cast<int64_t>(p.key_dim) * p.key_dim * (1 + group)
                          : 0;
  return state * (1 + group) + t2r;
}

float* KvState(const GsaParams& p, float* layer_state, int g) {
  return layer_state + g * GsaStateFloatsPerKvHead(p.key_dim, p.value_dim, p.memory_rows);
}

}  // namespace

template <>
void LaunchGsaPrefill<Backend::kCpu>(const GsaParams& p, const PrefillTarget& target,
                                     Stream /*stream*/) {
  if (p.rows == 0) return;
  float* layer_state = host::LayerState(target.state, target.slot);
  cpu::ParallelFor(p.kv_heads, TokenWork(p) * p.rows * p.kv_heads, [&](int begin, int end) {
    GsaScratch scratch(p);
    for (int g = begin; g < end; ++g) {
      float* kv_state = KvState(p, layer_state, g);
      for (int r = 0; r < p.rows; ++r) GsaKvHeadToken(p, r, g, kv_state, scratch);
    }
  });
}

template <>
void LaunchGsaStep<Backend::kCpu>(const GsaParams& p, const StepTarget& target, Stream /*stream*/) {
  const int pairs = p.rows * p.kv_heads;
  if (pairs == 0) return;
  cpu::ParallelFor(pairs, TokenWork(p) * pairs, [&](int begin, int end) {
    GsaScratch scratch(p);
    for (int pair = begin; pair < end; ++pair) {
      const int r = pair / p.kv_heads;
      const int g = pair % p.kv_heads;
      float* layer_state = host::LayerState(target.state, target.slots[r]);
      GsaKvHeadToken(p, r, g, KvState(p, layer_state, g), scratch);
    }
  });
}

}  // namespace slotserve::kernels
