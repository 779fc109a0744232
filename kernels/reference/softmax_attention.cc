// Reference causal softmax attention over a per-request KV cache: each token is written to
// its cache row, then attends to rows 0..position; arithmetic in double.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/reference/host_access.h"
#include "kernels/reference/softmax_in_double.h"
#include "kernels/softmax_attention.h"

namespace slotserve::kernels {
namespace {

void SoftmaxToken(const SoftmaxAttentionParams& p, int row, int32_t position, float* layer_state) {
  const int d = p.head_dim;
  const int64_t width = static_cast<int64_t>(p.heads) * d;
  float* key_cache = layer_state;                            // [max_context x heads*d]
  float* value_cache = layer_state + p.max_context * width;  // [max_context x heads*d]
  const float* q_row = p.q + row * p.in_stride;
  const float* k_row = p.k + row * p.in_stride;
  const float* v_row = p.v + row * p.in_stride;
  for (int64_t c = 0; c < width; ++c) {
    key_cache[position * width + c] = k_row[c];
    value_cache[position * width + c] = v_row[c];
  }
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  std::vector<double> scores(position + 1);
  for (int h = 0; h < p.heads; ++h) {
    const float* q = q_row + h * d;
    for (int s = 0; s <= position; ++s) {
      const float* key = key_cache + s * width + h * d;
      double dot = 0.0;
      for (int i = 0; i < d; ++i) dot += static_cast<double>(q[i]) * key[i];
      scores[s] = dot * scale;
    }
    host::SoftmaxInPlace(scores.data(), position + 1);
    float* out = p.out + row * p.out_stride + h * d;
    for (int i = 0; i < d; ++i) {
      double sum = 0.0;
      for (int s = 0; s <= position; ++s) sum += scores[s] * value_cache[s * width + h * d + i];
      out[i] = static_cast<float>(sum);
    }
  }
}

}  // namespace

template <>
void LaunchSoftmaxAttentionPrefill<Backend::kReference>(const SoftmaxAttentionParams& p,
                                                        const PrefillTarget& target,
                                                        Stream /*stream*/) {
  float* state = host::LayerState(target.state, target.slot);
  for (int r = 0; r < p.rows; ++r) SoftmaxToken(p, r, target.start_position + r, state);
}

template <>
void LaunchSoftmaxAttentionStep<Backend::kReference>(const SoftmaxAttentionParams& p,
                                                     const StepTarget& target, Stream /*stream*/) {
  for (int r = 0; r < p.rows; ++r) {
    SoftmaxToken(p, r, target.positions[r], host::LayerState(target.state, target.slots[r]));
  }
}

}  // namespace slotserve::kernels
