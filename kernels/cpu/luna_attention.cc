// cpu causal Luna (docs/MODEL_FORMAT.md "The attention kinds"). Prefill computes the chunk's
// packing weights p_t = act(pc_t . pq^T) with one sgemm per head, then scans the tokens; step
// computes them with dot products for each of the B requests.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/parallel_for.h"
#include "kernels/cpu/prefetch.h"
#include "kernels/cpu/row_products.h"
#include "kernels/cpu/vector_ops.h"
#include "kernels/luna_attention.h"
#include "kernels/reference/host_access.h"

namespace slotserve::kernels {
namespace {

void Activate(LunaActivation activation, float* values, int n) {
  constexpr float kLn2 = 0.69314718055994530942f;
  for (int i = 0; i < n; ++i) {
    const float u = values[i];
    if (activation == LunaActivation::kSoftplus) {
      // (1/ln2) log(1 + 2^u) = max(u, 0) + log1p(exp(-|u| ln2)) / ln2, overflow-free.
      values[i] = std::max(u, 0.0f) + std::log1p(std::exp(-std::abs(u) * kLn2)) / kLn2;
    } else {
      values[i] = u > 0.0f ? u + 1.0f : std::exp(u);
    }
  }
}

// Absorbs one token (packing weights `weights`, L floats) into head h's state and writes its
// output; `scores` holds L floats. `next`: the state the step absorbs into after this one,
// prefetched over this one's rows of A.
void LunaHeadToken(const LunaParams& p, int row, int h, int32_t position, float* head_state,
                   const float* weights, float* scores, const cpu::PrefetchSpan& next = {}) {
  const int d = p.head_dim;
  const int length = p.length;
  float* a_state = head_state;               // A [d x L]
  float* c_state = head_state + d * length;  // C [L x d]
  const float* q = p.q + row * p.in_stride + h * d;
  const float* k = p.k + row * p.in_stride + h * d;
  const float* v = p.v + row * p.in_stride + h * d;
  const float inv_t = 1.0f / (static_cast<float>(position) + 1.0f);
  const float q_scale = inv_t / std::sqrt(static_cast<float>(d));
  std::fill(scores, scores + length, 0.0f);
  for (int i = 0; i < d; ++i) {
    next.Part(i, d);
    float* a_row = a_state + i * length;
    cpu::Axpy(k[i], weights, a_row, length);
    cpu::Axpy(q[i] * q_scale, a_row, scores, length);  // scores = (q/sqrt(d)) . A / t
  }
  for (int l = 0; l < length; ++l) cpu::Axpy(weights[l], v, c_state + l * d, d);
  cpu::SoftmaxInPlace(scores, length);
  float* out = p.out + row * p.out_stride + h * d;
  std::fill(out, out + d, 0.0f);
  for (int l = 0; l < length; ++l) cpu::Axpy(scores[l] * inv_t, c_state + l * d, out, d);
}

int64_t HeadFloats(const LunaParams& p) { return 2LL * p.head_dim * p.length; }

}  // namespace

template <>
void LaunchLunaPrefill<Backend::kCpu>(const LunaParams& p, const PrefillTarget& target,
                                      Stream /*stream*/) {
  if (p.rows == 0) return;
  const int d = p.head_dim;
  const int length = p.length;
  const int pq_stride = p.heads * d;
  float* layer_state = host::LayerState(target.state, target.slot);
  std::vector<float> weights(static_cast<size_t>(p.rows) * length);
  std::vector<float> scores(length);
  for (int h = 0; h < p.heads; ++h) {
    // weights[t, l] = pc_t . pq_l for the whole chunk (head h's columns of both).
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, p.rows, length, d, 1.0f, p.pc + h * d,
                static_cast<int>(p.in_stride), p.pq + h * d, pq_stride, 0.0f, weights.data(),
                length);
    Activate(p.activation, weights.data(), p.rows * length);
    float* head_state = layer_state + h * HeadFloats(p);
    for (int r = 0; r < p.rows; ++r) {
      LunaHeadToken(p, r, h, target.start_position + r, head_state, weights.data() + r * length,
                    scores.data());
    }
  }
}

template <>
void LaunchLunaStep<Backend::kCpu>(const LunaParams& p, const StepTarget& target,
                                   Stream /*stream*/) {
  const int d = p.head_dim;
  const int length = p.length;
  const int64_t pq_stride = static_cast<int64_t>(p.heads) * d;
  // (row, head) pairs own disjoint state: split between the compute threads (parallel_for.h).
  const int pairs = p.rows * p.heads;
  const int64_t work = int64_t{pairs} * length * 4 * d;
  const int64_t head_bytes = HeadFloats(p) * int64_t{sizeof(float)};
  auto head_state = [&](int pair) {
    return host::LayerState(target.state, target.slots[pair / p.heads]) +
           (pair % p.heads) * HeadFloats(p);
  };
  cpu::ParallelFor(pairs, work, [&](int begin, int end) {
    std::vector<float> weights(length), scores(length);
    for (int pair = begin; pair < end; ++pair) {
      const int r = pair / p.heads;
      const int h = pair % p.heads;
      cpu::PrefetchSpan next;  // the next pair's head state (cpu/prefetch.h)
      if (pair + 1 < end) next = {head_state(pair + 1), head_bytes};
      const float* pc = p.pc + r * p.in_stride + h * d;
      cpu::DotRows(pc, p.pq + h * d, pq_stride, length, d, weights.data());
      Activate(p.activation, weights.data(), length);
      LunaHeadToken(p, r, h, target.positions[r], head_state(pair), weights.data(), scores.data(),
                    next);
    }
  });
}

}  // namespace slotserve::kernels
