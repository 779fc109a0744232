// exp and silu for eight floats at once (AVX2 + FMA), for the cpu ops of the fla models (SwiGLU,
// gated and silu-input RMS norms, short convolutions), where std::exp per element would cost
// more than the rest of the op. exp is Cephes' expf: n = round(x / ln 2), r = x - n ln 2 in two
// parts, a degree-6 polynomial for e^r on [-ln2/2, ln2/2], times 2^n built in the exponent
// bits. Measured against exp in double over [-87, 88]: exp within 1.2e-7 relative (1 ulp),
// silu within 2.1e-7; the argument is clamped to [-87.3, 88.3] so 2^n stays a normal float.
// Only for the kernels library (x86-64-v3).
#pragma once

#include <immintrin.h>

#include <cmath>

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

// silu(x) = x / (1 + e^-x). A division rather than x * reciprocal: it keeps the result within
// ~3 ulp. For x below -87.3 e^-x is clamped, which leaves |silu| < 1e-36 instead of ~0.
inline __m256 Silu8(__m256 x) {
  const __m256 e = Exp8(_mm256_sub_ps(_mm256_setzero_ps(), x));
  return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

inline float Silu(float x) { return x / (1.0f + std::exp(-x)); }

// y[i] = silu(x[i]) for i < n; y may alias x.
inline void SiluArray(const float* x, float* y, int n) {
  int i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, Silu8(_mm256_loadu_ps(x + i)));
  for (; i < n; ++i) y[i] = Silu(x[i]);
}

}  // namespace slotserve::kernels::cpu
