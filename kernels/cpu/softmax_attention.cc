// cpu causal softmax attention over the KV cache. Prefill writes the chunk's keys and values
// into the cache, then per head does scores = Q K^T (one sgemm over every cached row), the
// causal mask and softmax row by row, and out = P V (a second sgemm). Step handles each of
// the B requests head by head over its cached rows (cpu/head_reads.h: row_products.h's loops,
// each (request, head) pair prefetching the next one's rows as it reads its own). An f16 cache
// (SoftmaxAttentionParams::f16_cache) is written rounded (half_conversions.h); the step reads
// its halves widening them in registers (row_products.h over uint16_t rows), and prefill widens the
// request's cached rows into fp32 once for its two sgemms.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/half_conversions.h"
#include "kernels/cpu/head_reads.h"
#include "kernels/cpu/parallel_for.h"
#include "kernels/cpu/vector_ops.h"
#include "kernels/reference/host_access.h"
#include "kernels/softmax_attention.h"

namespace slotserve::kernels {
namespace {

// A layer's cache rows, [max_context x heads*d] each: floats, or halves for an f16 cache.
template <typename Element>
struct KvCache {
  Element* keys;
  Element* values;
  int64_t width;  // heads * d
};

template <typename Element>
KvCache<Element> CacheOf(const SoftmaxAttentionParams& p, float* layer_state) {
  const int64_t width = static_cast<int64_t>(p.heads) * p.head_dim;
  Element* keys = reinterpret_cast<Element*>(layer_state);
  return {keys, keys + p.max_context * width, width};
}

void StoreKeyValue(const SoftmaxAttentionParams& p, int row, int32_t position, float* layer_state) {
  const float* k = p.k + row * p.in_stride;
  const float* v = p.v + row * p.in_stride;
  if (p.f16_cache) {
    const KvCache<uint16_t> cache = CacheOf<uint16_t>(p, layer_state);
    cpu::RoundToHalves(k, cache.width, cache.keys + position * cache.width);
    cpu::RoundToHalves(v, cache.width, cache.values + position * cache.width);
  } else {
    const KvCache<float> cache = CacheOf<float>(p, layer_state);
    std::copy_n(k, cache.width, cache.keys + position * cache.width);
    std::copy_n(v, cache.width, cache.values + position * cache.width);
  }
}

// The step's pairs [begin, end) (pair = row * heads + head): each reads its cached rows
// 0..position (cpu/head_reads.h).
template <typename Element>
void AttendPairs(const SoftmaxAttentionParams& p, const StepTarget& target, int begin, int end,
                 float scale) {
  const int d = p.head_dim;
  auto pair_read = [&](int pair) {
    const int r = pair / p.heads;
    const int h = pair % p.heads;
    const KvCache<Element> cache =
        CacheOf<Element>(p, host::LayerState(target.state, target.slots[r]));
    return cpu::HeadRead<Element>{p.q + r * p.in_stride + h * d, p.out + r * p.out_stride + h * d,
                                  cache.keys + h * d, cache.values + h * d,
                                  target.positions[r] + 1};
  };
  cpu::AttendPairs<Element>(begin, end, pair_read, static_cast<int64_t>(p.heads) * d, d, scale);
}

}  // namespace

template <>
void LaunchSoftmaxAttentionPrefill<Backend::kCpu>(const SoftmaxAttentionParams& p,
                                                  const PrefillTarget& target, Stream /*stream*/) {
  if (p.rows == 0) return;
  const int d = p.head_dim;
  float* layer_state = host::LayerState(target.state, target.slot);
  for (int r = 0; r < p.rows; ++r) StoreKeyValue(p, r, target.start_position + r, layer_state);
  const int context = target.start_position + p.rows;  // cached rows the last token sees
  KvCache<float> cache = CacheOf<float>(p, layer_state);
  // An f16 cache's rows 0..context as fp32 for sgemm. Per calling thread and reused: a chunk of
  // a long prompt would otherwise map and fault in megabytes per layer (the workers only read).
  thread_local std::vector<float> widened;
  if (p.f16_cache) {
    const KvCache<uint16_t> halves = CacheOf<uint16_t>(p, layer_state);
    const int64_t cached = context * halves.width;
    widened.resize(2 * cached);
    cpu::WidenHalves(halves.keys, cached, widened.data());
    cpu::WidenHalves(halves.values, cached, widened.data() + cached);
    cache = {widened.data(), widened.data() + cached, halves.width};
  }
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
    StoreKeyValue(p, r, target.positions[r], host::LayerState(target.state, target.slots[r]));
    work += int64_t{2} * (target.positions[r] + 1) * p.heads * d;
  }
  // (row, head) pairs are independent (each reads its own slot's cache): split between the
  // compute threads (parallel_for.h).
  cpu::ParallelFor(p.rows * p.heads, work, [&](int begin, int end) {
    if (p.f16_cache) {
      AttendPairs<uint16_t>(p, target, begin, end, scale);
    } else {
      AttendPairs<float>(p, target, begin, end, scale);
    }
  });
}

}  // namespace slotserve::kernels
