// Lane masks of finite floats, for the sampler's kernels (sampling_weights.cc, truncation.cc),
// which must skip -inf, +inf and NaN logits without a branch. Only for the kernels library
// (x86-64-v3).
#pragma once

#include <immintrin.h>

namespace slotserve::kernels::cpu {

// All-ones lanes where x is finite: x - x is 0 for finite x and NaN for inf and NaN.
inline __m256 FiniteMask(__m256 x) {
  return _mm256_cmp_ps(_mm256_sub_ps(x, x), _mm256_setzero_ps(), _CMP_EQ_OQ);
}

// FiniteMask for four lanes.
inline __m128 FiniteMask(__m128 x) { return _mm_cmpeq_ps(_mm_sub_ps(x, x), _mm_setzero_ps()); }

}  // namespace slotserve::kernels::cpu
