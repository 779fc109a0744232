// Causal Luna: the fused projection is [q | k | v | pc] ([q | k | pc] with tie_kv, where
// v = k). pq = pq_proj(luna_p) / sqrt(d) does not depend on the sequence and is computed once
// at load.
#include <cmath>
#include <string>
#include <vector>

#include "base/status_macros.h"
#include "kernels/luna_attention.h"
#include "models/attention_layer.h"
#include "models/device_weights.h"
#include "models/model_weights.h"

namespace slotserve::models {
namespace {

class LunaAttentionLayer final
    : public KernelAttentionLayer<kernels::LunaParams, kernels::LaunchLunaPrefill,
                                  kernels::LaunchLunaStep> {
 public:
  LunaAttentionLayer(const ModelConfig& config, kernels::Backend backend, kernels::DeviceBuffer pq)
      : KernelAttentionLayer(config, backend), pq_(std::move(pq)) {}

 private:
  void FillKindParams(const AttentionIo& io, kernels::LunaParams& params) const override {
    const AttentionConfig& attention = config().attention;
    params.length = attention.length;
    if (attention.tie_kv) params.v = params.k;
    params.pc = io.projections + (attention.tie_kv ? 2 : 3) * config().d_model;
    params.pq = pq_.as<float>();
    params.activation =
        attention.elu1 ? kernels::LunaActivation::kElu1 : kernels::LunaActivation::kSoftplus;
  }

  kernels::DeviceBuffer pq_;  // [L, E]
};

}  // namespace

absl::StatusOr<std::unique_ptr<AttentionLayer>> CreateLunaAttentionLayer(
    const ModelConfig& config, kernels::Backend backend, const SafetensorsFile& file,
    const std::string& attention_prefix) {
  const std::string& prefix = attention_prefix;
  const std::vector<float> memory = file.Find(prefix + "luna_p")->ToFloat32();          // [L, E]
  const std::vector<float> weight = file.Find(prefix + "pq_proj.weight")->ToFloat32();  // [E, E]
  const std::vector<float> bias = file.Find(prefix + "pq_proj.bias")->ToFloat32();      // [E]
  const size_t length = static_cast<size_t>(config.attention.length);
  const size_t width = static_cast<size_t>(config.d_model);
  const double scale = 1.0 / std::sqrt(static_cast<double>(config.head_dim()));
  std::vector<float> pq(length * width);
  for (size_t l = 0; l < length; ++l) {
    for (size_t out = 0; out < width; ++out) {
      double sum = bias[out];
      for (size_t in = 0; in < width; ++in) {
        sum += static_cast<double>(memory[l * width + in]) * weight[out * width + in];
      }
      pq[l * width + out] = static_cast<float>(sum * scale);
    }
  }
  SLOTSERVE_ASSIGN_OR_RETURN(kernels::DeviceBuffer device_pq, UploadFloats(backend, pq));
  return std::make_unique<LunaAttentionLayer>(config, backend, std::move(device_pq));
}

}  // namespace slotserve::models
