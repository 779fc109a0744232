// row_products.h over rows stored as IEEE halves (the softmax f16 KV cache): the same two
// inner loops, each half row widened to fp32 in registers (F16C) as it is read, so the cache
// costs half the bytes to read and the arithmetic stays fp32. Plus the two conversions of a
// contiguous run of values. Results equal DotRows / WeightedRowSum over the widened rows up to
// the order of the float additions.
#pragma once

#include <cstdint>

#include "kernels/cpu/row_products.h"
#include "kernels/float16.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>
#define SLOTSERVE_HALF_ROWS_VECTORISED 1
#endif

namespace slotserve::kernels::cpu {

#ifdef SLOTSERVE_HALF_ROWS_VECTORISED
inline __m256 LoadHalves(const uint16_t* at) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at)));
}
#endif

// out[i] = the half nearest values[i] (ties to even, as FloatToHalf), for i < n.
inline void RoundToHalves(const float* __restrict values, int64_t n, uint16_t* __restrict out) {
  int64_t i = 0;
#ifdef SLOTSERVE_HALF_ROWS_VECTORISED
  for (; i + 8 <= n; i += 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(values + i), _MM_FROUND_TO_NEAREST_INT));
  }
#endif
  for (; i < n; ++i) out[i] = FloatToHalf(values[i]);
}

// out[i] = halves[i] widened, for i < n.
inline void WidenHalves(const uint16_t* __restrict halves, int64_t n, float* __restrict out) {
  int64_t i = 0;
#ifdef SLOTSERVE_HALF_ROWS_VECTORISED
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, LoadHalves(halves + i));
#endif
  for (; i < n; ++i) out[i] = HalfToFloat(halves[i]);
}

// out[j] = rows[j * row_stride .. + d) . x for j < n, the rows being halves.
inline void DotHalfRows(const float* __restrict x, const uint16_t* __restrict rows,
                        int64_t row_stride, int n, int d, float* __restrict out) {
  int j = 0;
#ifdef SLOTSERVE_HALF_ROWS_VECTORISED
  const int vector_d = d & ~7;
  for (; j + 8 <= n; j += 8) {
    const uint16_t* r = rows + j * row_stride;
    __m256 acc[8];
    for (int k = 0; k < 8; ++k) acc[k] = _mm256_setzero_ps();
    for (int i = 0; i < vector_d; i += 8) {
      const __m256 xv = _mm256_loadu_ps(x + i);
      for (int k = 0; k < 8; ++k) {
        acc[k] = _mm256_fmadd_ps(LoadHalves(r + k * row_stride + i), xv, acc[k]);
      }
    }
    _mm256_storeu_ps(out + j,
                     SumEach(acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]));
    for (int i = vector_d; i < d; ++i) {
      for (int k = 0; k < 8; ++k) out[j + k] += HalfToFloat(r[k * row_stride + i]) * x[i];
    }
  }
  for (; j < n; ++j) {  // the last n % 8 rows, one accumulator each
    const uint16_t* r = rows + j * row_stride;
    __m256 acc = _mm256_setzero_ps();
    for (int i = 0; i < vector_d; i += 8) {
      acc = _mm256_fmadd_ps(LoadHalves(r + i), _mm256_loadu_ps(x + i), acc);
    }
    float sum = HorizontalSum(acc);
    for (int i = vector_d; i < d; ++i) sum += HalfToFloat(r[i]) * x[i];
    out[j] = sum;
  }
#endif
  for (; j < n; ++j) {
    const uint16_t* r = rows + j * row_stride;
    float sum = 0.0f;
    for (int i = 0; i < d; ++i) sum += HalfToFloat(r[i]) * x[i];
    out[j] = sum;
  }
}

// out[0..d) = sum_j weights[j] * rows[j * row_stride .. + d) for j < n (out is overwritten),
// the rows being halves.
inline void WeightedHalfRowSum(const float* __restrict weights, const uint16_t* __restrict rows,
                               int64_t row_stride, int n, int d, float* __restrict out) {
  int i = 0;
#ifdef SLOTSERVE_HALF_ROWS_VECTORISED
  for (; i + 64 <= d; i += 64) {  // eight accumulators, as WeightedRowSum
    __m256 acc[8];
    for (int c = 0; c < 8; ++c) acc[c] = _mm256_setzero_ps();
    for (int j = 0; j < n; ++j) {
      const __m256 w = _mm256_set1_ps(weights[j]);
      const uint16_t* r = rows + j * row_stride + i;
      for (int c = 0; c < 8; ++c) acc[c] = _mm256_fmadd_ps(w, LoadHalves(r + 8 * c), acc[c]);
    }
    for (int c = 0; c < 8; ++c) _mm256_storeu_ps(out + i + 8 * c, acc[c]);
  }
  for (; i + 8 <= d; i += 8) {
    __m256 acc = _mm256_setzero_ps();
    for (int j = 0; j < n; ++j) {
      acc = _mm256_fmadd_ps(_mm256_set1_ps(weights[j]), LoadHalves(rows + j * row_stride + i), acc);
    }
    _mm256_storeu_ps(out + i, acc);
  }
#endif
  for (; i < d; ++i) {
    float sum = 0.0f;
    for (int j = 0; j < n; ++j) sum += weights[j] * HalfToFloat(rows[j * row_stride + i]);
    out[i] = sum;
  }
}

}  // namespace slotserve::kernels::cpu
