// Reference ABC (docs/MODEL_FORMAT.md "The attention kinds"): every token, in prefill or step, goes
// through the same scalar update-then-read of its request's state; arithmetic in double, state
// stored as float.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/abc_attention.h"
#include "kernels/reference/host_access.h"
#include "kernels/reference/softmax_in_double.h"

namespace slotserve::kernels {
namespace {

// Absorbs row `row` of the inputs into one request's layer state and writes its output row.
void AbcToken(const AbcParams& p, int row, float* layer_state) {
  const int dk = p.head_dim;
  const int dv = AbcValueDim(p);
  const int memory_rows = p.memory_rows;
  const int64_t head_floats = AbcStateFloatsPerHead(dk, dv, memory_rows);
  std::vector<double> keys_mean(static_cast<size_t>(memory_rows) * dk);
  std::vector<double> values_mean(static_cast<size_t>(memory_rows) * dv);
  std::vector<double> scores(memory_rows);
  for (int h = 0; h < p.heads; ++h) {
    float* key_sum = layer_state + h * head_floats;  // K~ [M x dk]
    float* value_sum = key_sum + memory_rows * dk;   // V~ [M x dv]
    float* z = value_sum + memory_rows * dv;         // [M]
    float* running_max = z + memory_rows;            // [M]
    const float* q = p.q + row * p.in_stride + h * dk;
    const float* k = p.k + row * p.in_stride + h * dk;
    const float* v = p.v + row * p.in_stride + h * dv;
    const float* logits = p.memory_logits + row * p.in_stride + h * memory_rows;

    for (int j = 0; j < memory_rows; ++j) {
      const double s = AbcClampLogit(logits[j], p.logit_min, p.logit_max);
      // An empty memory row (z == 0) has running max -inf: its old contents get weight 0.
      const double old_max =
          z[j] == 0.0f ? -std::numeric_limits<double>::infinity() : running_max[j];
      const double new_max = std::max(old_max, s);
      const double decay = std::exp(old_max - new_max);
      const double weight = std::exp(s - new_max);
      z[j] = static_cast<float>(decay * z[j] + weight);
      running_max[j] = static_cast<float>(new_max);
      for (int i = 0; i < dk; ++i) {
        key_sum[j * dk + i] = static_cast<float>(decay * key_sum[j * dk + i] + weight * k[i]);
      }
      for (int i = 0; i < dv; ++i) {
        value_sum[j * dv + i] = static_cast<float>(decay * value_sum[j * dv + i] + weight * v[i]);
      }
    }

    const double scale = 1.0 / std::sqrt(static_cast<double>(dk));
    for (int j = 0; j < memory_rows; ++j) {
      double dot = 0.0;
      for (int i = 0; i < dk; ++i) {
        keys_mean[j * dk + i] = static_cast<double>(key_sum[j * dk + i]) / z[j];
        dot += keys_mean[j * dk + i] * q[i];
      }
      for (int i = 0; i < dv; ++i) {
        values_mean[j * dv + i] = static_cast<double>(value_sum[j * dv + i]) / z[j];
      }
      scores[j] = dot * scale;
    }
    host::SoftmaxInPlace(scores.data(), memory_rows);
    float* out = p.out + row * p.out_stride + h * dv;
    for (int i = 0; i < dv; ++i) {
      double sum = 0.0;
      for (int j = 0; j < memory_rows; ++j) sum += scores[j] * values_mean[j * dv + i];
      out[i] = static_cast<float>(sum);
    }
  }
}

}  // namespace

template <>
void LaunchAbcPrefill<Backend::kReference>(const AbcParams& p, const PrefillTarget& target,
                                           Stream /*stream*/) {
  float* state = host::LayerState(target.state, target.slot);
  for (int r = 0; r < p.rows; ++r) AbcToken(p, r, state);
}

template <>
void LaunchAbcStep<Backend::kReference>(const AbcParams& p, const StepTarget& target,
                                        Stream /*stream*/) {
  for (int r = 0; r < p.rows; ++r) AbcToken(p, r, host::LayerState(target.state, target.slots[r]));
}

}  // namespace slotserve::kernels
