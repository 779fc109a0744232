// exp for eight floats at once (AVX2 + FMA), for the cpu kernels where std::exp per element
// would cost more than the rest of the op (softmax over attention scores, SwiGLU, silu). It is
// Cephes' expf: n = round(x / ln 2), r = x - n ln 2 in two parts, a degree-6 polynomial for e^r
// on [-ln2/2, ln2/2], times 2^n built in the exponent bits. Measured against exp in double over
// [-87, 88]: within 1.2e-7 relative (1 ulp); the argument is clamped to [-87.3, 88.3] so 2^n
// stays a normal float. Only for the kernels library (x86-64-v3).
#pragma once

#include <immintrin.h>

namespace slotserve::kernels::cpu {

inline __m256 Exp8(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.3f)), _mm256_set1_ps(88.3f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // ln 2 = 0.693359375 - 2.12194440e-4: the first part has few bits, so n * it is exact.
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i exponent =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(exponent));
}

// Exp8, with lanes below -87.3 (where e^x is below the smallest normal float, and -inf) set to
// exactly 0, as std::exp gives for -inf: softmax uses -inf for entries that must get no weight.
// NaN stays NaN (Exp8's clamp alone would turn it into a finite number and hide it).
inline __m256 Exp8FlushTiny(__m256 x) {
  const __m256 representable = _mm256_cmp_ps(x, _mm256_set1_ps(-87.3f), _CMP_GE_OQ);
  const __m256 not_a_number = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
  return _mm256_or_ps(_mm256_and_ps(representable, Exp8(x)), _mm256_and_ps(not_a_number, x));
}

}  // namespace slotserve::kernels::cpu
