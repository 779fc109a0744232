// cpu RMS norm: per group, the mean of squares through the AVX2 dot product (float, eight
// lanes x four accumulators, as the layer norm), silu of the input and of the gate eight lanes
// at a time (silu_avx2.h); rows split between the compute threads.
#include <cmath>
#include <vector>

#include "kernels/cpu/parallel_for.h"
#include "kernels/cpu/silu_avx2.h"
#include "kernels/cpu/vector_ops.h"
#include "kernels/rms_norm.h"

namespace slotserve::kernels {

template <>
void LaunchRmsNorm<Backend::kCpu>(const RmsNormParams& p, Stream /*stream*/) {
  const int cols = p.groups * p.group_dim;
  // A silu costs about twenty multiply-adds; the norm itself about four per value.
  const int64_t per_value = 4 + (p.silu_input ? 20 : 0) + (p.gate != nullptr ? 20 : 0);
  const int64_t work = static_cast<int64_t>(p.rows) * cols * per_value;
  cpu::ParallelFor(p.rows, work, [&](int begin, int end) {
    std::vector<float> activated(p.silu_input ? cols : 0);
    std::vector<float> gate_silu(p.gate != nullptr ? cols : 0);
    for (int r = begin; r < end; ++r) {
      const float* x = p.x + r * p.x_stride;
      // Without silu_input the norm reads x directly: a group's values are all read (for the
      // sum of squares) before any of them is written, and each write follows its own read,
      // so y aliasing x is safe.
      const float* u = x;
      if (p.silu_input) {
        cpu::SiluArray(x, activated.data(), cols);
        u = activated.data();
      }
      if (p.gate != nullptr) cpu::SiluArray(p.gate + r * p.gate_stride, gate_silu.data(), cols);
      float* y = p.y + r * p.y_stride;
      for (int g = 0; g < p.groups; ++g) {
        const int first = g * p.group_dim;
        const float* group = u + first;
        const float mean_square = cpu::Dot(group, group, p.group_dim) / p.group_dim;
        const float inv_rms = 1.0f / std::sqrt(mean_square + p.eps);
        float* out = y + first;
        if (p.weight == nullptr && p.gate == nullptr) {
          for (int i = 0; i < p.group_dim; ++i) out[i] = group[i] * inv_rms;
        } else if (p.gate == nullptr) {
          for (int i = 0; i < p.group_dim; ++i) out[i] = group[i] * inv_rms * p.weight[i];
        } else {
          const float* gate = gate_silu.data() + first;
          for (int i = 0; i < p.group_dim; ++i) {
            const float scale = p.weight != nullptr ? p.weight[i] : 1.0f;
            out[i] = group[i] * inv_rms * scale * gate[i];
          }
        }
      }
    }
  });
}

}  // namespace slotserve::kernels
