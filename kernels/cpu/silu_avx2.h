// silu for eight floats at once (AVX2 + FMA), for the cpu ops of the fla models (SwiGLU, gated
// and silu-input RMS norms, short convolutions). exp is Exp8 (exp_avx2.h). Measured against
// double: silu within 2.1e-7 relative. Only for the kernels library (x86-64-v3).
#pragma once

#include <immintrin.h>

#include <cmath>

#include "kernels/cpu/exp_avx2.h"

namespace slotserve::kernels::cpu {

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
