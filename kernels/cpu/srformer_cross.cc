// cpu SRformer cross attention (kernels/srformer_cross.h): KᵀV and K_Sᵀ V_S as sgemms over the
// source (or segment) rows, the RAF projection as one sgemm per head on a segment change, and
// the segment's softmax attention with vector dot products.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/row_products.h"
#include "kernels/cpu/vector_ops.h"
#include "kernels/reference/host_access.h"
#include "kernels/srformer_cross.h"

namespace slotserve::kernels {

template <>
void LaunchSrformerBuild<Backend::kCpu>(const SrformerBuildParams& p, Stream /*stream*/) {
  const SrformerLayout& l = p.layout;
  const int d = l.head_dim;
  const int64_t width = l.width();
  std::fill(p.layer, p.layer + l.memory_floats(), 0.0f);
  for (int i = 0; i < p.positions; ++i) {
    std::copy_n(p.keys + i * p.in_stride, width, p.layer + l.keys() + i * width);
    std::copy_n(p.values + i * p.in_stride, width, p.layer + l.values() + i * width);
  }
  const float* keys = p.layer + l.keys();
  const float* values = p.layer + l.values();
  for (int h = 0; h < l.heads; ++h) {
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, d, d, p.positions, 1.0f, keys + h * d,
                static_cast<int>(width), values + h * d, static_cast<int>(width), 0.0f,
                p.layer + l.key_value() + static_cast<int64_t>(h) * d * d, d);
    float norm = 0.0f;
    for (int i = 0; i < p.positions; ++i) {
      const float* key = keys + i * width + h * d;
      norm += cpu::Dot(key, key, d);
    }
    p.layer[l.key_norm() + h] = std::sqrt(norm);
  }
}

template <>
void LaunchSrformerStep<Backend::kCpu>(const SrformerStepParams& p, const StepTarget& target,
                                       Stream /*stream*/) {
  const SrformerLayout& l = p.layout;
  const int d = l.head_dim;
  const int64_t width = l.width();
  const int ld = static_cast<int>(width);
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  std::vector<float> pending(static_cast<size_t>(d) * d);
  std::vector<float> x(static_cast<size_t>(d) * d);
  std::vector<float> scores(p.segment);
  for (int r = 0; r < p.rows; ++r) {
    const float* layer = host::LayerState(target.state, target.slots[r]);
    const float* block = target.state.pool + target.slots[r] * target.state.slot_stride;
    const int n = static_cast<int>(block[p.length_offset]);
    float* raf_state = host::LayerState(p.raf_state, p.raf_slots[r]);
    const int segment = SrformerSegmentOf(target.positions[r], n, p.segment, p.target_length);
    const int first = segment * p.segment;
    const int rows_in_segment = std::min(first + p.segment, n) - first;
    for (int h = 0; h < l.heads; ++h) {
      const float* keys = layer + l.keys() + first * width + h * d;
      const float* values = layer + l.values() + first * width + h * d;
      float* mem = raf_state + l.membrane() + static_cast<int64_t>(h) * d * d;
      float* raf = raf_state + l.raf_output() + static_cast<int64_t>(h) * d * d;
      float& entered = raf_state[l.entered() + h];
      if (entered != static_cast<float>(segment + 1)) {
        // P = KV − K_Sᵀ V_S, then x = P Wᵀ + b row by row.
        std::copy_n(layer + l.key_value() + static_cast<int64_t>(h) * d * d, d * d, pending.data());
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, d, d, rows_in_segment, -1.0f, keys, ld,
                    values, ld, 1.0f, pending.data(), d);
        for (int a = 0; a < d; ++a) std::copy_n(p.raf_bias, d, x.data() + a * d);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, d, d, d, 1.0f, pending.data(), d,
                    p.raf_weight, d, 1.0f, x.data(), d);
        for (int e = 0; e < d * d; ++e) {
          float membrane = p.leak * mem[e] + x[e];
          const float y = membrane / p.threshold - 1.0f;
          if (y > 0) membrane -= p.threshold;
          mem[e] = membrane;
          raf[e] = std::max(y, 0.0f);
        }
        entered = static_cast<float>(segment + 1);
      }
      const float* q = p.q + r * p.q_stride + h * d;
      cpu::DotRows(q, keys, width, rows_in_segment, d, scores.data());
      for (int s = 0; s < rows_in_segment; ++s) scores[s] *= scale;
      cpu::SoftmaxInPlace(scores.data(), rows_in_segment);
      float* out = p.out + r * p.out_stride + h * d;
      cpu::WeightedRowSum(scores.data(), values, width, rows_in_segment, d, out);
      const float inverse_norm = 1.0f / std::max(layer[l.key_norm() + h], 1e-6f);
      for (int a = 0; a < d; ++a) cpu::Axpy(q[a] * inverse_norm, raf + a * d, out, d);
    }
  }
}

}  // namespace slotserve::kernels
