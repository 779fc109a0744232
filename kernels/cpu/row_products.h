// One vector against many short rows (d = 64 typical), the inner loops of every attention read
// on the cpu backend: scores = rows . x (a key cache, an ABC memory, a cross memory) and
// out = sum_j w_j rows_j (their values). Called once per (request, head) with n = 32 … a few
// hundred rows, where a BLAS call costs more than the arithmetic and one Dot per row spends
// most of its time folding its accumulator. DotRows takes eight rows at a time and folds the
// eight accumulators together (one transpose-and-add tree per eight scores); WeightedRowSum
// keeps the output in registers across all n rows instead of loading and storing it per row.
// Results equal Dot / Axpy up to the order of the float additions.
//
// The rows are floats, or IEEE halves (uint16_t: the softmax f16 KV cache), widened to fp32 in
// registers (F16C) as they are read: half the bytes to read, the same fp32 arithmetic.
//
// Prefetch (RowPrefetch): by default both loops ask for their own rows kPrefetchRowsAhead ahead
// of the one they read. A caller that knows which rows its next call will read (head_reads.h:
// the next (request, head) pair's keys and values) passes them as companion rows; the
// loop then asks for companion row j into L2 as it reads its own row j, so that the next call
// finds its rows there and the stream of reads from memory does not stop between calls. That
// next call then skips its own look-ahead.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/cpu/prefetch.h"
#include "kernels/cpu/vector_ops.h"
#include "kernels/float16.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace slotserve::kernels::cpu {

// How many rows ahead both loops ask for their cache lines. A softmax KV cache is read a head
// at a time: two lines of each 512-byte row, rows of other requests' slots in between, which
// the hardware prefetchers did not follow; at batch 32 the step's attention spent most of its
// time waiting on the first load of each row. 32 rows ahead measured ahead of 16
// (bench/results/attention_prefetch.md).
inline constexpr int kPrefetchRowsAhead = 32;

// What a loop prefetches besides reading: its own rows ahead (own_rows_ahead), and, row for row
// with its own, the companion rows [0, companion_rows) when given, which have the loop's row
// stride and width. In a standalone loop of the softmax step's reads (21 MB of f16 cache: batch
// 64, context 80, one thread, Zen 4), companion rows took a pass from ~2.5 ms to ~1.1 ms, near
// the core's streaming read rate; the own-rows look-ahead alone stays short of it because every
// call starts cold (bench/results/attention_companion_prefetch.md).
template <typename Element>
struct RowPrefetch {
  const Element* companion = nullptr;
  int companion_rows = 0;
  bool own_rows_ahead = true;  // with companion rows too: for rows no earlier call prefetched
};

#if defined(__AVX2__) && defined(__FMA__)
// [sum(a0), sum(a1), …, sum(a7)]: the horizontal sums of eight vectors in one vector.
inline __m256 SumEach(__m256 a0, __m256 a1, __m256 a2, __m256 a3, __m256 a4, __m256 a5, __m256 a6,
                      __m256 a7) {
  const __m256 pairs01 = _mm256_hadd_ps(a0, a1);
  const __m256 pairs23 = _mm256_hadd_ps(a2, a3);
  const __m256 pairs45 = _mm256_hadd_ps(a4, a5);
  const __m256 pairs67 = _mm256_hadd_ps(a6, a7);
  // Per 128-bit half: [a0, a1, a2, a3] and [a4, a5, a6, a7], each summed over that half's lanes.
  const __m256 quads0123 = _mm256_hadd_ps(pairs01, pairs23);
  const __m256 quads4567 = _mm256_hadd_ps(pairs45, pairs67);
  const __m256 low_halves = _mm256_permute2f128_ps(quads0123, quads4567, 0x20);
  const __m256 high_halves = _mm256_permute2f128_ps(quads0123, quads4567, 0x31);
  return _mm256_add_ps(low_halves, high_halves);
}
// Companion rows [begin, end) of prefetch, into L2.
template <typename Element>
inline void PrefetchCompanionRows(const RowPrefetch<Element>& prefetch, int64_t row_stride,
                                  int begin, int end, int d) {
  end = end < prefetch.companion_rows ? end : prefetch.companion_rows;
  for (int j = begin; j < end; ++j) {
    PrefetchRow<PrefetchTo::kL2>(prefetch.companion + j * row_stride, d);
  }
}
// Eight consecutive row values as fp32, and one.
inline __m256 Load8(const float* at) { return _mm256_loadu_ps(at); }
inline __m256 Load8(const uint16_t* at) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at)));
}
#endif
inline float Load1(float value) { return value; }
inline float Load1(uint16_t half) { return HalfToFloat(half); }

// out[j] = rows[j * row_stride .. + d) . x for j < n.
template <typename Element>
inline void DotRows(const float* __restrict x, const Element* __restrict rows, int64_t row_stride,
                    int n, int d, float* __restrict out, RowPrefetch<Element> prefetch = {}) {
  int j = 0;
#if defined(__AVX2__) && defined(__FMA__)
  const int vector_d = d & ~7;
  for (; j + 8 <= n; j += 8) {
    const Element* r = rows + j * row_stride;
    if (prefetch.companion != nullptr) PrefetchCompanionRows(prefetch, row_stride, j, j + 8, d);
    if (prefetch.own_rows_ahead) {
      for (int k = kPrefetchRowsAhead; k < kPrefetchRowsAhead + 8 && j + k < n; ++k)
        PrefetchRow(r + k * row_stride, d);
    }
    __m256 acc[8];
    for (int k = 0; k < 8; ++k) acc[k] = _mm256_setzero_ps();
    for (int i = 0; i < vector_d; i += 8) {
      const __m256 xv = _mm256_loadu_ps(x + i);
      for (int k = 0; k < 8; ++k) {
        acc[k] = _mm256_fmadd_ps(Load8(r + k * row_stride + i), xv, acc[k]);
      }
    }
    _mm256_storeu_ps(out + j,
                     SumEach(acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]));
    for (int i = vector_d; i < d; ++i) {
      for (int k = 0; k < 8; ++k) out[j + k] += Load1(r[k * row_stride + i]) * x[i];
    }
  }
  if (prefetch.companion != nullptr) {
    PrefetchCompanionRows(prefetch, row_stride, j, prefetch.companion_rows, d);
  }
  if constexpr (!std::is_same_v<Element, float>) {
    for (; j < n; ++j) {  // the last n % 8 rows, one accumulator each
      const Element* r = rows + j * row_stride;
      __m256 acc = _mm256_setzero_ps();
      for (int i = 0; i < vector_d; i += 8)
        acc = _mm256_fmadd_ps(Load8(r + i), _mm256_loadu_ps(x + i), acc);
      float sum = HorizontalSum(acc);
      for (int i = vector_d; i < d; ++i) sum += Load1(r[i]) * x[i];
      out[j] = sum;
    }
  }
#endif
  for (; j < n; ++j) {
    if constexpr (std::is_same_v<Element, float>) {
      out[j] = Dot(x, rows + j * row_stride, d);
    } else {
      const Element* r = rows + j * row_stride;
      float sum = 0.0f;
      for (int i = 0; i < d; ++i) sum += Load1(r[i]) * x[i];
      out[j] = sum;
    }
  }
}

// out[0..d) = sum_j weights[j] * rows[j * row_stride .. + d) for j < n (out is overwritten).
template <typename Element>
inline void WeightedRowSum(const float* __restrict weights, const Element* __restrict rows,
                           int64_t row_stride, int n, int d, float* __restrict out,
                           RowPrefetch<Element> prefetch = {}) {
  int i = 0;
#if defined(__AVX2__) && defined(__FMA__)
  for (; i + 64 <= d; i += 64) {  // eight accumulators: two FMAs per cycle at FMA latency 4
    __m256 acc[8];
    for (int c = 0; c < 8; ++c) acc[c] = _mm256_setzero_ps();
    // Companion rows go whole (all d columns) during the first 64-column pass.
    const bool companion = prefetch.companion != nullptr && i == 0;
    for (int j = 0; j < n; ++j) {
      const __m256 w = _mm256_set1_ps(weights[j]);
      const Element* r = rows + j * row_stride + i;
      if (companion && j < prefetch.companion_rows) {
        PrefetchRow<PrefetchTo::kL2>(prefetch.companion + j * row_stride, d);
      }
      if (prefetch.own_rows_ahead && j + kPrefetchRowsAhead < n) {
        PrefetchRow(r + kPrefetchRowsAhead * row_stride, 64);
      }
      for (int c = 0; c < 8; ++c) acc[c] = _mm256_fmadd_ps(w, Load8(r + 8 * c), acc[c]);
    }
    if (companion) PrefetchCompanionRows(prefetch, row_stride, n, prefetch.companion_rows, d);
    for (int c = 0; c < 8; ++c) _mm256_storeu_ps(out + i + 8 * c, acc[c]);
  }
  if (d < 64 && prefetch.companion != nullptr) {  // no 64-column pass: ask for them up front
    PrefetchCompanionRows(prefetch, row_stride, 0, prefetch.companion_rows, d);
  }
  for (; i + 8 <= d; i += 8) {
    __m256 acc = _mm256_setzero_ps();
    for (int j = 0; j < n; ++j) {
      acc = _mm256_fmadd_ps(_mm256_set1_ps(weights[j]), Load8(rows + j * row_stride + i), acc);
    }
    _mm256_storeu_ps(out + i, acc);
  }
#endif
  for (; i < d; ++i) {
    float sum = 0.0f;
    for (int j = 0; j < n; ++j) sum += weights[j] * Load1(rows[j * row_stride + i]);
    out[i] = sum;
  }
}

}  // namespace slotserve::kernels::cpu
