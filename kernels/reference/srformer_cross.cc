// Reference SRformer cross attention (kernels/srformer_cross.h), in double, written as the
// algorithm reads.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/reference/attend_rows.h"
#include "kernels/reference/host_access.h"
#include "kernels/srformer_cross.h"

namespace slotserve::kernels {

template <>
void LaunchSrformerBuild<Backend::kReference>(const SrformerBuildParams& p, Stream /*stream*/) {
  const SrformerLayout& l = p.layout;
  const int d = l.head_dim;
  const int64_t width = l.width();
  std::fill(p.layer, p.layer + l.memory_floats(), 0.0f);
  for (int i = 0; i < p.positions; ++i) {
    for (int64_t c = 0; c < width; ++c) {
      p.layer[l.keys() + i * width + c] = p.keys[i * p.in_stride + c];
      p.layer[l.values() + i * width + c] = p.values[i * p.in_stride + c];
    }
  }
  for (int h = 0; h < l.heads; ++h) {
    double norm = 0.0;
    for (int i = 0; i < p.positions; ++i) {
      for (int a = 0; a < d; ++a) norm += std::pow(p.keys[i * p.in_stride + h * d + a], 2.0);
    }
    p.layer[l.key_norm() + h] = static_cast<float>(std::sqrt(norm));
    for (int a = 0; a < d; ++a) {
      for (int b = 0; b < d; ++b) {
        double sum = 0.0;
        for (int i = 0; i < p.positions; ++i) {
          sum += static_cast<double>(p.keys[i * p.in_stride + h * d + a]) *
                 p.values[i * p.in_stride + h * d + b];
        }
        p.layer[l.key_value() + (h * d + a) * d + b] = static_cast<float>(sum);
      }
    }
  }
}

template <>
void LaunchSrformerStep<Backend::kReference>(const SrformerStepParams& p, const StepTarget& target,
                                             Stream /*stream*/) {
  const SrformerLayout& l = p.layout;
  const int d = l.head_dim;
  const int64_t width = l.width();
  std::vector<double> x(static_cast<size_t>(d) * d);
  for (int r = 0; r < p.rows; ++r) {
    const float* layer = host::LayerState(target.state, target.slots[r]);
    const float* block = target.state.pool + target.slots[r] * target.state.slot_stride;
    const int n = static_cast<int>(block[p.length_offset]);
    float* raf_state = host::LayerState(p.raf_state, p.raf_slots[r]);
    const int segment = SrformerSegmentOf(target.positions[r], n, p.segment, p.target_length);
    const int first = segment * p.segment;
    const int last = std::min(first + p.segment, n);  // exclusive
    for (int h = 0; h < l.heads; ++h) {
      const float* keys = layer + l.keys() + h * d;
      const float* values = layer + l.values() + h * d;
      float* mem = raf_state + l.membrane() + h * d * d;
      float* raf = raf_state + l.raf_output() + h * d * d;
      float& entered = raf_state[l.entered() + h];
      if (entered != segment + 1) {
        for (int a = 0; a < d; ++a) {
          std::vector<double> row(d);  // P[a, :] = KV[a, :] − Σ_{i in S} K[i, a] V[i, :]
          for (int b = 0; b < d; ++b) {
            double in_segment = 0.0;
            for (int i = first; i < last; ++i) {
              in_segment += static_cast<double>(keys[i * width + a]) * values[i * width + b];
            }
            row[b] = layer[l.key_value() + (h * d + a) * d + b] - in_segment;
          }
          for (int c = 0; c < d; ++c) {
            double sum = p.raf_bias[c];
            for (int b = 0; b < d; ++b)
              sum += static_cast<double>(p.raf_weight[c * d + b]) * row[b];
            x[a * d + c] = sum;
          }
        }
        for (int e = 0; e < d * d; ++e) {
          double membrane = static_cast<double>(p.leak) * mem[e] + x[e];
          const double y = membrane / p.threshold - 1.0;
          if (y > 0) membrane -= p.threshold;
          mem[e] = static_cast<float>(membrane);
          raf[e] = static_cast<float>(std::max(y, 0.0));
        }
        entered = static_cast<float>(segment + 1);
      }
      const float* q = p.q + r * p.q_stride + h * d;
      float* out = p.out + r * p.out_stride + h * d;
      host::AttendRowsInDouble(q, keys + first * width, values + first * width, width, last - first,
                               d, out);
      const double norm = std::max(static_cast<double>(layer[l.key_norm() + h]), 1e-6);
      for (int c = 0; c < d; ++c) {
        double recurrent = 0.0;
        for (int a = 0; a < d; ++a) recurrent += static_cast<double>(q[a]) * raf[a * d + c];
        out[c] = static_cast<float>(out[c] + recurrent / norm);
      }
    }
  }
}

}  // namespace slotserve::kernels
