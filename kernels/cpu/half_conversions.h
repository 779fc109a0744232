// A contiguous run of values to IEEE halves and back, vectorised (F16C): how the softmax f16 KV
// cache writes its rows and how prefill and the embedding widen them. The reads of half rows
// inside attention are row_products.h's, over uint16_t rows.
#pragma once

#include <cstdint>

#include "kernels/float16.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>
#define SLOTSERVE_HALF_CONVERSIONS_VECTORISED 1
#endif

namespace slotserve::kernels::cpu {

// out[i] = the half nearest values[i] (ties to even, as FloatToHalf), for i < n.
inline void RoundToHalves(const float* __restrict values, int64_t n, uint16_t* __restrict out) {
  int64_t i = 0;
#ifdef SLOTSERVE_HALF_CONVERSIONS_VECTORISED
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
#ifdef SLOTSERVE_HALF_CONVERSIONS_VECTORISED
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(
        out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(halves + i))));
#endif
  for (; i < n; ++i) out[i] = HalfToFloat(halves[i]);
}

}  // namespace slotserve::kernels::cpu
