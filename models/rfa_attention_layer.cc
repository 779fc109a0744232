// RFA: the fused projection is [q | k | v] plus, with gate=true, H gate logits. The random
// projection W~ = rfa_random * rfa_sigma is folded once at load.
#include <cmath>
#include <string>
#include <vector>

#include "base/status_macros.h"
#include "kernels/rfa_attention.h"
#include "models/attention_layer.h"
#include "models/device_weights.h"
#include "models/model_weights.h"

namespace slotserve::models {
namespace {

class RfaAttentionLayer final
    : public KernelAttentionLayer<kernels::RfaParams, kernels::LaunchRfaPrefill,
                                  kernels::LaunchRfaStep> {
 public:
  RfaAttentionLayer(const ModelConfig& config, kernels::Backend backend,
                    kernels::DeviceBuffer projection)
      : KernelAttentionLayer(config, backend), projection_(std::move(projection)) {}

 private:
  void FillKindParams(const AttentionIo& io, kernels::RfaParams& params) const override {
    const AttentionConfig& attention = config().attention;
    params.features = attention.features;
    params.gate_logits = attention.gate ? io.projections + 3 * config().d_model : nullptr;
    params.projection = projection_.as<float>();
    params.feature_scale = attention.feature_scale;
    params.eps = attention.eps;
    params.norm_eps = attention.norm_eps;
    params.interleave = attention.interleave;
  }

  kernels::DeviceBuffer projection_;  // W~ [H, D, d]
};

}  // namespace

absl::StatusOr<std::unique_ptr<AttentionLayer>> CreateRfaAttentionLayer(
    const ModelConfig& config, kernels::Backend backend, const SafetensorsFile& file,
    const std::string& attention_prefix) {
  const std::string& prefix = attention_prefix;
  const std::vector<float> random = file.Find(prefix + "rfa_random")->ToFloat32();  // [H, D, d]
  const std::vector<float> sigma = file.Find(prefix + "rfa_sigma")->ToFloat32();    // [H, d]
  const size_t head_dim = static_cast<size_t>(config.head_dim());
  const size_t features = static_cast<size_t>(config.attention.features);
  std::vector<float> projection(random.size());
  for (size_t i = 0; i < random.size(); ++i) {
    const size_t head = i / (features * head_dim);
    const size_t column = i % head_dim;
    projection[i] = random[i] * sigma[head * head_dim + column];
  }
  SLOTSERVE_ASSIGN_OR_RETURN(kernels::DeviceBuffer device_projection,
                             UploadFloats(backend, projection));
  return std::make_unique<RfaAttentionLayer>(config, backend, std::move(device_projection));
}

}  // namespace slotserve::models
