// cpu ABC (docs/MODEL_FORMAT.md "The attention kinds"). Prefill scans the chunk head by head so one
// head's state (M*(dk + dv) + 2*M floats, 16 KiB for M = 32, dk = dv = 64) stays in L1 across the
// whole chunk; step walks the B requests, each at its own state slot.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/abc_attention.h"
#include "kernels/cpu/parallel_for.h"
#include "kernels/cpu/prefetch.h"
#include "kernels/cpu/row_products.h"
#include "kernels/cpu/vector_ops.h"
#include "kernels/reference/host_access.h"

namespace slotserve::kernels {
namespace {

struct AbcHeadState {
  float* key_sum;      // K~ [M x dk]
  float* value_sum;    // V~ [M x dv]
  float* z;            // [M]
  float* running_max;  // [M]
};

AbcHeadState HeadState(const AbcParams& p, float* layer_state, int h) {
  const int dv = AbcValueDim(p);
  const int64_t key_block = static_cast<int64_t>(p.memory_rows) * p.head_dim;
  const int64_t value_block = static_cast<int64_t>(p.memory_rows) * dv;
  float* base = layer_state + h * AbcStateFloatsPerHead(p.head_dim, dv, p.memory_rows);
  float* z = base + key_block + value_block;
  return {base, base + key_block, z, z + p.memory_rows};
}

// Absorbs one token of head h into `state` and writes the head's output; `scores` holds M floats.
// `next` is the state the caller absorbs into after this one (the step's next (request, head)
// pair), if any: it is prefetched into L2 over the M memory rows of this one, so that a step
// over many requests keeps reading from memory without stopping at each new slot.
void AbcHeadToken(const AbcParams& p, int row, int h, const AbcHeadState& state, float* scores,
                  const cpu::PrefetchSpan& next = {}) {
  const int dk = p.head_dim;
  const int dv = AbcValueDim(p);
  const int memory_rows = p.memory_rows;
  const float* q = p.q + row * p.in_stride + h * dk;
  const float* k = p.k + row * p.in_stride + h * dk;
  const float* v = p.v + row * p.in_stride + h * dv;
  const float* logits = p.memory_logits + row * p.in_stride + h * memory_rows;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dk));
  for (int j = 0; j < memory_rows; ++j) {
    next.Part(j, memory_rows);
    const float s = AbcClampLogit(logits[j], p.logit_min, p.logit_max);
    float decay = 0.0f, weight = 1.0f;  // an empty memory row (z == 0) takes the token
    float new_max = s;
    if (state.z[j] != 0.0f) {
      // One of exp(m - m') and exp(s - m') is exp(0) = 1, so one exp call per memory row suffices.
      const float old_max = state.running_max[j];
      const float smaller = std::exp(-std::abs(s - old_max));
      if (s > old_max) {
        decay = smaller;
      } else {
        new_max = old_max;
        decay = 1.0f;
        weight = smaller;
      }
    }
    state.z[j] = decay * state.z[j] + weight;
    state.running_max[j] = new_max;
    cpu::DecayAxpy(decay, weight, k, state.key_sum + j * dk, dk);
    cpu::DecayAxpy(decay, weight, v, state.value_sum + j * dv, dv);
  }
  // K̄_j . q = (K~_j . q) / z_j, all M rows at once (the updated memory is still in L1).
  cpu::DotRows(q, state.key_sum, dk, memory_rows, dk, scores);
  for (int j = 0; j < memory_rows; ++j) scores[j] = scores[j] * scale / state.z[j];
  cpu::SoftmaxInPlace(scores, memory_rows);
  for (int j = 0; j < memory_rows; ++j) scores[j] /= state.z[j];  // weights of V~ = V̄ z
  cpu::WeightedRowSum(scores, state.value_sum, dv, memory_rows, dv,
                      p.out + row * p.out_stride + h * dv);
}

}  // namespace

// Heads (prefill) and (row, head) pairs (step) are independent: each owns its part of the
// state, so they are split between the compute threads (parallel_for.h).
static int64_t TokenWork(const AbcParams& p) {
  return static_cast<int64_t>(2) * p.memory_rows * (p.head_dim + AbcValueDim(p));
}

template <>
void LaunchAbcPrefill<Backend::kCpu>(const AbcParams& p, const PrefillTarget& target,
                                     Stream /*stream*/) {
  float* layer_state = host::LayerState(target.state, target.slot);
  cpu::ParallelFor(p.heads, TokenWork(p) * p.rows * p.heads, [&](int begin, int end) {
    std::vector<float> scores(p.memory_rows);
    for (int h = begin; h < end; ++h) {
      const AbcHeadState state = HeadState(p, layer_state, h);
      for (int r = 0; r < p.rows; ++r) AbcHeadToken(p, r, h, state, scores.data());
    }
  });
}

template <>
void LaunchAbcStep<Backend::kCpu>(const AbcParams& p, const StepTarget& target, Stream /*stream*/) {
  const int pairs = p.rows * p.heads;
  const int64_t head_bytes =
      AbcStateFloatsPerHead(p.head_dim, AbcValueDim(p), p.memory_rows) * int64_t{sizeof(float)};
  auto head_state = [&](int pair) {
    return HeadState(p, host::LayerState(target.state, target.slots[pair / p.heads]),
                     pair % p.heads);
  };
  cpu::ParallelFor(pairs, TokenWork(p) * pairs, [&](int begin, int end) {
    std::vector<float> scores(p.memory_rows);
    for (int pair = begin; pair < end; ++pair) {
      // A head's whole state, [K~ | V~ | z | running max], is contiguous.
      cpu::PrefetchSpan next;
      if (pair + 1 < end) next = {head_state(pair + 1).key_sum, head_bytes};
      AbcHeadToken(p, pair / p.heads, pair % p.heads, head_state(pair), scores.data(), next);
    }
  });
}

}  // namespace slotserve::kernels
