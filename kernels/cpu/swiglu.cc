// cpu SwiGLU: silu(gate) * up eight lanes at a time (silu_avx2.h: within a few ulp of the
// std::exp form); rows split between the compute threads.
#include <immintrin.h>

#include "kernels/cpu/parallel_for.h"
#include "kernels/cpu/silu_avx2.h"
#include "kernels/swiglu.h"

namespace slotserve::kernels {

template <>
void LaunchSwiGlu<Backend::kCpu>(const SwiGluParams& p, Stream /*stream*/) {
  // About twenty multiply-adds per silu.
  const int64_t work = static_cast<int64_t>(p.rows) * p.cols * 20;
  cpu::ParallelFor(p.rows, work, [&](int begin, int end) {
    for (int r = begin; r < end; ++r) {
      const float* gate = p.gate + r * p.in_stride;
      const float* up = p.up + r * p.in_stride;
      // May alias gate: every lane is loaded before it is stored.
      float* out = p.out + r * p.out_stride;
      int c = 0;
      for (; c + 8 <= p.cols; c += 8) {
        const __m256 activated = cpu::Silu8(_mm256_loadu_ps(gate + c));
        _mm256_storeu_ps(out + c, _mm256_mul_ps(activated, _mm256_loadu_ps(up + c)));
      }
      for (; c < p.cols; ++c) out[c] = cpu::Silu(gate[c]) * up[c];
    }
  });
}

}  // namespace slotserve::kernels
