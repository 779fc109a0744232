// cpu causal softmax attention over the KV cache. Prefill writes the chunk's keys and values
// into the cache, then per head does scores = Q K^T (one sgemm over every cached row), the
// causal mask and softmax row by row, and out = P V (a second sgemm). Step handles each of
// the B requests head by head with row_products.h over its cached rows.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/parallel_for.h"
#include "kernels/cpu/row_products.h"
#include "kernels/cpu/vector_ops.h"
#include "kernels/reference/host_access.h"
#include "kernels/softmax_attention.h"

namespace slotserve::kernels {
namespace {

struct KvCache {
  float* keys;    // [max_context x heads*d]
  float* values;  // [max_context x heads*d]
  int64_t width;  // heads * d
};

KvCache CacheOf(const SoftmaxAttentionParams& p, float* layer_state) {
  const int64_t width = static_cast<int64_t>(p.heads) * p.head_dim;
  return {layer_state, layer_state + p.max_context * width, width};
}

void StoreKeyValue(const SoftmaxAttentionParams& p, int row, int32_t position,
                   const KvCache& cache) {
  std::copy_n(p.k + row * p.in_stride, cache.width, cache.keys + position * cache.width);
  std::copy_n(p.v + row * p.in_stride, cache.width, cache.values + position * cache.width);
}

}  // namespace

template <>
void LaunchSoftmaxAttentionPrefill<Backend::kCpu>(const SoftmaxAttentionParams& p,
                                                  const PrefillTarget& target, Stream /*stream*/) {
  if (p.rows == 0) return;
  const int d = p.head_dim;
  const KvCache cache = CacheOf(p, host::LayerState(target.state, target.slot));
  for (int r = 0; r < p.rows; ++r) StoreKeyValue(p, r, target.start_position + r, cache);
  const int context = target.start_position + p.rows;  // cached rows the last token sees
  const int ld_cache = static_cast<int>(cache.width);
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  // Heads are independent: split between the compute threads (parallel_for.h), each with its
  // own scores.
  const int64_t work = int64_t{4} * p.rows * context * d * p.heads;
  cpu::ParallelFor(p.heads, work, [&](int begin, int end) {
    std::vector<float> scores(static_cast<size_t>(p.rows) * context);
    for (int h = begin; h < end; ++h) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, p.rows, context, d, scale, p.q + h * d,
                  static_cast<int>(p.in_stride), cache.keys + h * d, ld_cache, 0.0f, scores.data(),
                  context);
      for (int r = 0; r < p.rows; ++r) {
        float* row_scores = scores.data() + static_cast<int64_t>(r) * context;
        const int visible = target.start_position + r + 1;
        cpu::SoftmaxInPlace(row_scores, visible);
        std::fill(row_scores + visible, row_scores + context, 0.0f);
      }
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, p.rows, d, context, 1.0f,
                  scores.data(), context, cache.values + h * d, ld_cache, 0.0f, p.out + h * d,
                  static_cast<int>(p.out_stride));
    }
  });
}

template <>
void LaunchSoftmaxAttentionStep<Backend::kCpu>(const SoftmaxAttentionParams& p,
                                               const StepTarget& target, Stream /*stream*/) {
  const int d = p.head_dim;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  int64_t work = 0;
  for (int r = 0; r < p.rows; ++r) {
    StoreKeyValue(p, r, target.positions[r],
                  CacheOf(p, host::LayerState(target.state, target.slots[r])));
    work += int64_t{2} * (target.positions[r] + 1) * p.heads * d;
  }
  // (row, head) pairs are independent (each reads its own slot's cache): split between the
  // compute threads (parallel_for.h).
  cpu::ParallelFor(p.rows * p.heads, work, [&](int begin, int end) {
    std::vector<float> scores;
    for (int pair = begin; pair < end; ++pair) {
      const int r = pair / p.heads;
      const int h = pair % p.heads;
      const int32_t position = target.positions[r];
      const KvCache cache = CacheOf(p, host::LayerState(target.state, target.slots[r]));
      scores.resize(position + 1);
      const float* q = p.q + r * p.in_stride + h * d;
      cpu::DotRows(q, cache.keys + h * d, cache.width, position + 1, d, scores.data());
      for (int s = 0; s <= position; ++s) scores[s] *= scale;
      cpu::SoftmaxInPlace(scores.data(), position + 1);
      cpu::WeightedRowSum(scores.data(), cache.values + h * d, cache.width, position + 1, d,
                          p.out + r * p.out_stride + h * d);
    }
  });
}

}  // namespace slotserve::kernels
