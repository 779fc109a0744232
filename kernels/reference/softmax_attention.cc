// Reference causal softmax attention over a per-request KV cache: each token is written to
// its cache row, then attends to rows 0..position; arithmetic in double. An f16 cache stores
// each value rounded to half (float16.h) and reads it back widened.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/float16.h"
#include "kernels/reference/host_access.h"
#include "kernels/reference/softmax_in_double.h"
#include "kernels/softmax_attention.h"

namespace slotserve::kernels {
namespace {

// The cache of one layer, fp32 or half: element i of the keys or of the values.
class KvCache {
 public:
  KvCache(const SoftmaxAttentionParams& p, float* layer_state)
      : f16_(p.f16_cache),
        floats_(layer_state),
        halves_(reinterpret_cast<uint16_t*>(layer_state)),
        values_offset_(p.max_context * static_cast<int64_t>(p.heads) * p.head_dim) {}

  void Store(bool value_cache, int64_t i, float x) {
    const int64_t at = value_cache ? values_offset_ + i : i;
    if (f16_) {
      halves_[at] = FloatToHalf(x);
    } else {
      floats_[at] = x;
    }
  }
  double Load(bool value_cache, int64_t i) const {
    const int64_t at = value_cache ? values_offset_ + i : i;
    return f16_ ? HalfToFloat(halves_[at]) : floats_[at];
  }

 private:
  bool f16_;
  float* floats_;
  uint16_t* halves_;
  int64_t values_offset_;  // elements from the keys' start to the values'
};

constexpr bool kKeys = false;
constexpr bool kValues = true;

void SoftmaxToken(const SoftmaxAttentionParams& p, int row, int32_t position, float* layer_state) {
  const int d = p.head_dim;
  const int64_t width = static_cast<int64_t>(p.heads) * d;
  KvCache cache(p, layer_state);  // K then V, each [max_context x heads*d]
  const float* q_row = p.q + row * p.in_stride;
  const float* k_row = p.k + row * p.in_stride;
  const float* v_row = p.v + row * p.in_stride;
  for (int64_t c = 0; c < width; ++c) {
    cache.Store(kKeys, position * width + c, k_row[c]);
    cache.Store(kValues, position * width + c, v_row[c]);
  }
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  std::vector<double> scores(position + 1);
  for (int h = 0; h < p.heads; ++h) {
    const float* q = q_row + h * d;
    for (int s = 0; s <= position; ++s) {
      double dot = 0.0;
      for (int i = 0; i < d; ++i)
        dot += static_cast<double>(q[i]) * cache.Load(kKeys, s * width + h * d + i);
      scores[s] = dot * scale;
    }
    host::SoftmaxInPlace(scores.data(), position + 1);
    float* out = p.out + row * p.out_stride + h * d;
    for (int i = 0; i < d; ++i) {
      double sum = 0.0;
      for (int s = 0; s <= position; ++s)
        sum += scores[s] * cache.Load(kValues, s * width + h * d + i);
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
