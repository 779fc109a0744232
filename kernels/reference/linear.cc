// Reference linear: y = x W^T + b (+ y), one double-precision dot product per output. With
// int8 activations (I8 weights only) each input row is first quantised by
// int8_activation_blocks.h and the products are the integers' (exact), scaled per block.
#include <algorithm>
#include <vector>

#include "kernels/int8_activation_blocks.h"
#include "kernels/linear.h"
#include "kernels/reference/host_access.h"

namespace slotserve::kernels {
namespace {

// sum_b d_b * sum_{i in b} q_w[i] q_x[i] for weight row `o` against one quantised input row.
double Int8RowDot(const LinearParams& p, int o, const std::vector<int8_t>& q,
                  const std::vector<float>& scales) {
  const auto* w = static_cast<const int8_t*>(p.weight) + static_cast<int64_t>(o) * p.in_features;
  double sum = 0.0;
  for (int b = 0; b * kInt8ActivationBlock < p.in_features; ++b) {
    int64_t block = 0;
    const int end = std::min(p.in_features, (b + 1) * kInt8ActivationBlock);
    for (int i = b * kInt8ActivationBlock; i < end; ++i) block += int64_t{w[i]} * q[i];
    sum += static_cast<double>(scales[b]) * static_cast<double>(block);
  }
  return sum * p.weight_scale[o];
}

}  // namespace

template <>
void LaunchLinear<Backend::kReference>(const LinearParams& p, Stream /*stream*/) {
  const bool int8_dot = p.int8_activations && p.weight_dtype == DType::kI8;
  std::vector<int8_t> q(int8_dot ? p.in_features : 0);
  std::vector<float> scales(int8_dot ? Int8ActivationBlocks(p.in_features) : 0);
  for (int r = 0; r < p.rows; ++r) {
    const float* x = p.x + r * p.x_stride;
    float* y = p.y + r * p.y_stride;
    if (int8_dot) {
      for (int b = 0; b < static_cast<int>(scales.size()); ++b) {
        const int first = b * kInt8ActivationBlock;
        scales[b] = QuantiseActivationBlock(
            x + first, std::min(kInt8ActivationBlock, p.in_features - first), q.data() + first);
      }
    }
    for (int o = 0; o < p.out_features; ++o) {
      double sum = 0.0;
      if (int8_dot) {
        sum = Int8RowDot(p, o, q, scales);
      } else {
        const int64_t row_start = static_cast<int64_t>(o) * p.in_features;
        const double row_scale = host::RowScale(p.weight_scale, p.weight_dtype, o);
        for (int i = 0; i < p.in_features; ++i) {
          sum += static_cast<double>(x[i]) *
                 (host::LoadAsFloat(p.weight, p.weight_dtype, row_start + i) * row_scale);
        }
      }
      if (p.bias != nullptr) sum += p.bias[o];
      if (p.accumulate) sum += y[o];
      y[o] = static_cast<float>(sum);
    }
  }
}

}  // namespace slotserve::kernels
