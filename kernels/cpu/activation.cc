// cpu activations: GELU (erf form, eight lanes at a time through fast_erf.h) and ReLU,
// element-wise in float; rows split between the compute threads (parallel_for.h).
#include <immintrin.h>

#include <cmath>

#include "kernels/activation.h"
#include "kernels/cpu/fast_erf_avx2.h"
#include "kernels/cpu/parallel_for.h"

namespace slotserve::kernels {
namespace {

constexpr float kInvSqrt2 = 0.70710678118654752440f;

void GeluRow(float* x, int cols) {
  const __m256 half = _mm256_set1_ps(0.5f);
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 inv_sqrt2 = _mm256_set1_ps(kInvSqrt2);
  int c = 0;
  for (; c + 8 <= cols; c += 8) {
    const __m256 v = _mm256_loadu_ps(x + c);
    const __m256 erf = cpu::Erf8(_mm256_mul_ps(v, inv_sqrt2));
    _mm256_storeu_ps(x + c, _mm256_mul_ps(_mm256_mul_ps(half, v), _mm256_add_ps(one, erf)));
  }
  for (; c < cols; ++c) x[c] = 0.5f * x[c] * (1.0f + std::erf(x[c] * kInvSqrt2));
}

}  // namespace

template <>
void LaunchActivation<Backend::kCpu>(const ActivationParams& p, Stream /*stream*/) {
  // About ten multiply-adds per GELU element; ReLU is a comparison.
  const int64_t work =
      static_cast<int64_t>(p.rows) * p.cols * (p.activation == Activation::kGelu ? 10 : 1);
  cpu::ParallelFor(p.rows, work, [&](int begin, int end) {
    for (int r = begin; r < end; ++r) {
      float* x = p.x + r * p.stride;
      switch (p.activation) {
        case Activation::kGelu:
          GeluRow(x, p.cols);
          break;
        case Activation::kRelu:
          for (int c = 0; c < p.cols; ++c) x[c] = x[c] > 0.0f ? x[c] : 0.0f;
          break;
      }
    }
  });
}

}  // namespace slotserve::kernels
