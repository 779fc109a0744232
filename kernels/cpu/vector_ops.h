// Short-vector primitives for the cpu backend's per-head loops (d = 64, M = 32 typical), where
// a BLAS call would cost more than the arithmetic. Loops without a reduction are left to the
// auto-vectoriser (-O3 -march=x86-64-v3); the dot product is written with AVX2 + FMA because
// the compiler may not reorder a float reduction on its own, and softmax uses Exp8
// (exp_avx2.h) because std::exp is a call per element. Many rows at once: row_products.h.
#pragma once

#include <cmath>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#include "kernels/cpu/exp_avx2.h"
#endif

namespace slotserve::kernels::cpu {

#if defined(__AVX2__) && defined(__FMA__)
// The sum of a vector's eight lanes.
inline float HorizontalSum(__m256 v) {
  __m128 folded = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  folded = _mm_add_ps(folded, _mm_movehl_ps(folded, folded));
  folded = _mm_add_ss(folded, _mm_movehdup_ps(folded));
  return _mm_cvtss_f32(folded);
}
#endif

inline float Dot(const float* __restrict a, const float* __restrict b, int n) {
  int i = 0;
  float sum = 0.0f;
#if defined(__AVX2__) && defined(__FMA__)
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  __m256 acc2 = _mm256_setzero_ps(), acc3 = _mm256_setzero_ps();
  for (; i + 32 <= n; i += 32) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
    acc2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), acc2);
    acc3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), acc3);
  }
  for (; i + 8 <= n; i += 8) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
  }
  sum = HorizontalSum(_mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3)));
#endif
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

// y += alpha * x
inline void Axpy(float alpha, const float* __restrict x, float* __restrict y, int n) {
  for (int i = 0; i < n; ++i) y[i] += alpha * x[i];
}

// y = keep * y + add * x   (a decayed running sum)
inline void DecayAxpy(float keep, float add, const float* __restrict x, float* __restrict y,
                      int n) {
  for (int i = 0; i < n; ++i) y[i] = keep * y[i] + add * x[i];
}

// y = alpha * x
inline void Scale(float alpha, const float* __restrict x, float* __restrict y, int n) {
  for (int i = 0; i < n; ++i) y[i] = alpha * x[i];
}

// In-place softmax of scores[0..n): exp(s - max) / sum; n >= 1. Entries of -inf get exactly 0.
inline void SoftmaxInPlace(float* scores, int n) {
  float max_score = scores[0];
  for (int i = 1; i < n; ++i) max_score = scores[i] > max_score ? scores[i] : max_score;
  float sum = 0.0f;
  int i = 0;
#if defined(__AVX2__) && defined(__FMA__)
  const __m256 shift = _mm256_set1_ps(max_score);
  __m256 sums = _mm256_setzero_ps();
  for (; i + 8 <= n; i += 8) {
    const __m256 e = Exp8FlushTiny(_mm256_sub_ps(_mm256_loadu_ps(scores + i), shift));
    _mm256_storeu_ps(scores + i, e);
    sums = _mm256_add_ps(sums, e);
  }
  sum = HorizontalSum(sums);
#endif
  for (; i < n; ++i) {
    scores[i] = std::exp(scores[i] - max_score);
    sum += scores[i];
  }
  const float inv = 1.0f / sum;
  for (i = 0; i < n; ++i) scores[i] *= inv;
}

}  // namespace slotserve::kernels::cpu
