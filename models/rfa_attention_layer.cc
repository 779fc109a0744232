// RFA: the fused projection is [q | k | v] plus, with gate=true, H gate logits. The random
// projection W~ = rfa_random * rfa_sigma is folded once at load.
#include <cmath>

#include "kernels/rfa_attention.h"
#include "models/attention_layer.h"
#include "models/device_weights.h"
#include "models/model_weights.h"
#include "models/status_macros.h"

namespace slotserve::models {
namespace {

class RfaAttentionLayer final : public AttentionLayer {
 public:
  RfaAttentionLayer(const ModelConfig& config, kernels::Backend backend,
                    kernels::DeviceBuffer projection)
      : backend_(backend),
        config_(config),
        projection_(std::move(projection)),
        names_(config.attention.gate
                   ? std::vector<std::string>{"q_proj", "k_proj", "v_proj", "gate_proj"}
                   : std::vector<std::string>{"q_proj", "k_proj", "v_proj"}) {}

  const std::vector<std::string>& projection_names() const override { return names_; }

  void Prefill(const AttentionIo& io, const kernels::PrefillTarget& target) const override {
    kernels::LaunchRfaPrefill(backend_, Params(io), target);
  }
  void Step(const AttentionIo& io, const kernels::StepTarget& target) const override {
    kernels::LaunchRfaStep(backend_, Params(io), target);
  }

 private:
  kernels::RfaParams Params(const AttentionIo& io) const {
    const AttentionConfig& attention = config_.attention;
    const int width = config_.d_model;
    kernels::RfaParams params;
    params.rows = io.rows;
    params.heads = config_.n_heads;
    params.head_dim = config_.head_dim();
    params.features = attention.features;
    params.q = io.projections;
    params.k = io.projections + width;
    params.v = io.projections + 2 * width;
    params.gate_logits = attention.gate ? io.projections + 3 * width : nullptr;
    params.in_stride = io.stride;
    params.projection = projection_.as<float>();
    params.feature_scale = attention.feature_scale;
    params.eps = attention.eps;
    params.norm_eps = attention.norm_eps;
    params.interleave = attention.interleave;
    params.out = io.out;
    params.out_stride = io.out_stride;
    return params;
  }

  kernels::Backend backend_;
  ModelConfig config_;
  kernels::DeviceBuffer projection_;  // W~ [H, D, d]
  std::vector<std::string> names_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<AttentionLayer>> CreateRfaAttentionLayer(const ModelConfig& config,
                                                                        kernels::Backend backend,
                                                                        const SafetensorsFile& file,
                                                                        int layer) {
  const std::string prefix = AttentionPrefix(layer);
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
