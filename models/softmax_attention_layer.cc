// The softmax baseline: the fused projection is [q | k | v]; the state is the KV cache.
#include "kernels/softmax_attention.h"
#include "models/attention_layer.h"

namespace slotserve::models {
namespace {

class SoftmaxAttentionLayer final
    : public KernelAttentionLayer<kernels::SoftmaxAttentionParams,
                                  kernels::LaunchSoftmaxAttentionPrefill,
                                  kernels::LaunchSoftmaxAttentionStep> {
 public:
  using KernelAttentionLayer::KernelAttentionLayer;

 private:
  void FillKindParams(const AttentionIo& /*io*/,
                      kernels::SoftmaxAttentionParams& params) const override {
    params.max_context = config().attention.max_context;
    params.f16_cache = config().attention.kv_cache_f16;
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<AttentionLayer>> CreateSoftmaxAttentionLayer(
    const ModelConfig& config, kernels::Backend backend, const SafetensorsFile& /*file*/,
    const std::string& /*attention_prefix*/) {
  return std::make_unique<SoftmaxAttentionLayer>(config, backend);
}

}  // namespace slotserve::models
