// exp for four doubles at once (AVX2 + FMA), for the sampler's token weights, which are summed
// in double so that a draw matches the reference's (kernels/cpu/sampling_weights.h). n =
// round(x / ln 2), r = x - n ln 2 in two parts (fdlibm's split: n * ln2_hi is exact), e^r by
// its Taylor series to r^13 on [-ln2/2, ln2/2] (truncation below 5e-18), times 2^n built in the
// exponent bits. Measured against std::exp over [-708, 709]: within 2 ulp
// (tests/unit/kernels/sampling_weights_test.cc). Below -708 (where 2^n would leave the normal
// doubles, and -inf) the result is exactly 0. Only for the kernels library (x86-64-v3).
#pragma once

#include <immintrin.h>

namespace slotserve::kernels::cpu {

inline __m256d Exp4d(__m256d x) {
  const __m256d representable = _mm256_cmp_pd(x, _mm256_set1_pd(-708.0), _CMP_GE_OQ);
  x = _mm256_min_pd(_mm256_max_pd(x, _mm256_set1_pd(-708.0)), _mm256_set1_pd(709.0));
  const __m256d n = _mm256_round_pd(_mm256_mul_pd(x, _mm256_set1_pd(1.4426950408889634)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256d r = _mm256_fnmadd_pd(n, _mm256_set1_pd(6.93147180369123816490e-01), x);
  r = _mm256_fnmadd_pd(n, _mm256_set1_pd(1.90821492927058770002e-10), r);
  // 1/k! for k = 13 down to 2.
  __m256d p = _mm256_set1_pd(1.0 / 6227020800.0);
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 479001600.0));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 39916800.0));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 3628800.0));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 362880.0));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 40320.0));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 5040.0));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 720.0));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 120.0));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 24.0));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0 / 6.0));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(0.5));
  // 1 + r + r^2 p, the small terms first.
  p = _mm256_fmadd_pd(p, _mm256_mul_pd(r, r), r);
  p = _mm256_add_pd(p, _mm256_set1_pd(1.0));
  const __m256i exponent = _mm256_slli_epi64(
      _mm256_add_epi64(_mm256_cvtepi32_epi64(_mm256_cvtpd_epi32(n)), _mm256_set1_epi64x(1023)), 52);
  return _mm256_and_pd(representable, _mm256_mul_pd(p, _mm256_castsi256_pd(exponent)));
}

}  // namespace slotserve::kernels::cpu
