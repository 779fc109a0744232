#include "kernels/cpu/fast_erf.h"

#include <cmath>

#include "kernels/cpu/fast_erf_avx2.h"

namespace slotserve::kernels::cpu {

void FastErf(const float* x, float* y, int n) {
  int i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, Erf8(_mm256_loadu_ps(x + i)));
  if (i == n) return;
  float tail_in[8] = {};
  float tail_out[8];
  for (int j = i; j < n; ++j) tail_in[j - i] = x[j];
  _mm256_storeu_ps(tail_out, Erf8(_mm256_loadu_ps(tail_in)));
  for (int j = i; j < n; ++j) y[j] = tail_out[j - i];
}

}  // namespace slotserve::kernels::cpu
