#include "kernels/cpu/sampling_weights.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/cpu/exp_double_avx2.h"
#include "kernels/cpu/finite_mask_avx2.h"

namespace slotserve::kernels::cpu {
namespace {

// Computes the weights of logits[0, n) four at a time, calling after_four(first, count) once
// each group is stored at weights + first; the last 1-3 go through a padded copy, so every
// weight takes the same path.
template <typename AfterFour>
void ForEachFourWeights(const float* logits, int n, float max_logit, float temperature,
                        double* weights, AfterFour after_four) {
  const __m256d max = _mm256_set1_pd(max_logit);
  const __m256d divisor = _mm256_set1_pd(temperature);
  const auto four = [&](const float* in, double* out) {
    const __m128 v = _mm_loadu_ps(in);
    const __m128 finite = FiniteMask(v);
    const __m256d x = _mm256_div_pd(_mm256_sub_pd(_mm256_cvtps_pd(v), max), divisor);
    const __m256d keep = _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm_castps_si128(finite)));
    _mm256_storeu_pd(out, _mm256_and_pd(keep, Exp4d(_mm256_and_pd(keep, x))));
  };
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    four(logits + i, weights + i);
    after_four(i, 4);
  }
  if (i < n) {
    float in[4] = {-std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                   -std::numeric_limits<float>::infinity(),
                   -std::numeric_limits<float>::infinity()};
    double out[4];
    std::copy(logits + i, logits + n, in);
    four(in, out);
    std::copy(out, out + (n - i), weights + i);
    after_four(i, n - i);
  }
}

}  // namespace

float MaxFinite(const float* x, int n) {
  const float lowest = -std::numeric_limits<float>::infinity();
  __m256 best = _mm256_set1_ps(lowest);
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    best = _mm256_max_ps(best, _mm256_blendv_ps(_mm256_set1_ps(lowest), v, FiniteMask(v)));
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, best);
  float result = *std::max_element(lanes, lanes + 8);
  for (; i < n; ++i) {
    if (std::isfinite(x[i])) result = std::max(result, x[i]);
  }
  return result;
}

void SamplingWeightsAndCumulative(const float* logits, int n, float max_logit, float temperature,
                                  double* weights, double* cumulative) {
  double running = 0.0;
  ForEachFourWeights(logits, n, max_logit, temperature, weights, [&](int first, int count) {
    for (int i = first; i < first + count; ++i) {
      running += weights[i];
      cumulative[i] = running;
    }
  });
}

}  // namespace slotserve::kernels::cpu
