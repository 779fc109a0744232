// Reference GSA (kernels/gsa_attention.h): every token, in prefill or step, goes through the same
// scalar update-then-read of its request's state, kv head by kv head; arithmetic in double,
// state stored as float (the engine's state dtype).
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/gsa_attention.h"
#include "kernels/reference/host_access.h"
#include "kernels/reference/softmax_in_double.h"

namespace slotserve::kernels {
namespace {

double Silu(double x) { return x / (1.0 + std::exp(-x)); }

// phi of one head's dk raw values (fla/modules/feature_map.py).
std::vector<double> FeatureMap(const GsaParams& p, const float* x) {
  const int dk = p.key_dim;
  std::vector<double> phi(dk);
  for (int i = 0; i < dk; ++i) {
    switch (p.feature_map) {
      case GsaFeatureMap::kSwish:
        phi[i] = Silu(x[i]);
        break;
      case GsaFeatureMap::kRelu:
        phi[i] = std::max(0.0, static_cast<double>(x[i]));
        break;
      case GsaFeatureMap::kT2r: {  // relu(x W^T): output i is row i of W dotted with x
        double dot = 0.0;
        for (int j = 0; j < dk; ++j) {
          dot += static_cast<double>(p.t2r_weight[static_cast<int64_t>(i) * dk + j]) * x[j];
        }
        phi[i] = std::max(0.0, dot);
        break;
      }
    }
  }
  return phi;
}

// Absorbs row `row` of the inputs into one request's layer state and writes its output row.
void GsaToken(const GsaParams& p, int row, float* layer_state) {
  const int dk = p.key_dim;
  const int dv = p.value_dim;
  const int memory_rows = p.memory_rows;
  const int group = p.heads / p.kv_heads;
  const int64_t in_row = static_cast<int64_t>(row) * p.in_stride;
  std::vector<double> decay(memory_rows), write(memory_rows), scores(memory_rows);
  for (int g = 0; g < p.kv_heads; ++g) {
    float* hk = layer_state + g * GsaStateFloatsPerKvHead(dk, dv, memory_rows);  // [dk x M]
    float* hv = hk + static_cast<int64_t>(dk) * memory_rows;                     // [M x dv]
    const std::vector<double> k = FeatureMap(p, p.k + in_row + static_cast<int64_t>(g) * dk);
    const float* v_raw = p.v + in_row + static_cast<int64_t>(g) * dv;
    const float* logits = p.forget_logits + in_row + static_cast<int64_t>(g) * memory_rows;

    for (int m = 0; m < memory_rows; ++m) {
      // logsigmoid in the form that overflows for neither sign; s = 1 - exp(f) through expm1
      // so that a gate close to 1 (f -> 0) still writes its small share accurately.
      const double x = logits[m];
      const double f = (std::min(0.0, x) - std::log1p(std::exp(-std::abs(x)))) /
                       static_cast<double>(p.gate_logit_normalizer);
      decay[m] = std::exp(f);
      write[m] = -std::expm1(f);
    }
    for (int d = 0; d < dk; ++d) {
      for (int m = 0; m < memory_rows; ++m) {
        float& cell = hk[static_cast<int64_t>(d) * memory_rows + m];
        cell = static_cast<float>(decay[m] * cell + write[m] * k[d]);
      }
    }
    for (int m = 0; m < memory_rows; ++m) {
      for (int j = 0; j < dv; ++j) {
        float& cell = hv[static_cast<int64_t>(m) * dv + j];
        cell = static_cast<float>(decay[m] * cell + write[m] * Silu(v_raw[j]));
      }
    }

    for (int h = g * group; h < (g + 1) * group; ++h) {
      const std::vector<double> q = FeatureMap(p, p.q + in_row + static_cast<int64_t>(h) * dk);
      for (int m = 0; m < memory_rows; ++m) {
        double dot = 0.0;
        for (int d = 0; d < dk; ++d) dot += q[d] * hk[static_cast<int64_t>(d) * memory_rows + m];
        scores[m] = dot;
      }
      host::SoftmaxInPlace(scores.data(), memory_rows);
      float* out = p.out + static_cast<int64_t>(row) * p.out_stride + static_cast<int64_t>(h) * dv;
      for (int j = 0; j < dv; ++j) {
        double sum = 0.0;
        for (int m = 0; m < memory_rows; ++m) {
          sum += scores[m] * hv[static_cast<int64_t>(m) * dv + j];
        }
        out[j] = static_cast<float>(sum);
      }
    }
  }
}

}  // namespace

template <>
void LaunchGsaPrefill<Backend::kReference>(const GsaParams& p, const PrefillTarget& target,
                                           Stream /*stream*/) {
  float* state = host::LayerState(target.state, target.slot);
  for (int r = 0; r < p.rows; ++r) GsaToken(p, r, state);
}

template <>
void LaunchGsaStep<Backend::kReference>(const GsaParams& p, const StepTarget& target,
                                        Stream /*stream*/) {
  for (int r = 0; r < p.rows; ++r) GsaToken(p, r, host::LayerState(target.state, target.slots[r]));
}

}  // namespace slotserve::kernels
