// The softmax baseline: the fused projection is [q | k | v]; the state is the KV cache.
#include "kernels/softmax_attention.h"
#include "models/attention_layer.h"

namespace slotserve::models {
namespace {

class SoftmaxAttentionLayer final : public AttentionLayer {
 public:
  SoftmaxAttentionLayer(const ModelConfig& config, kernels::Backend backend)
      : backend_(backend),
        heads_(config.n_heads),
        head_dim_(config.head_dim()),
        max_context_(config.attention.max_context),
        width_(config.d_model) {}

  const std::vector<std::string>& projection_names() const override {
    static const std::vector<std::string> kNames = {"q_proj", "k_proj", "v_proj"};
    return kNames;
  }

  void Prefill(const AttentionIo& io, const kernels::PrefillTarget& target) const override {
    kernels::LaunchSoftmaxAttentionPrefill(backend_, Params(io), target);
  }
  void Step(const AttentionIo& io, const kernels::StepTarget& target) const override {
    kernels::LaunchSoftmaxAttentionStep(backend_, Params(io), target);
  }

 private:
  kernels::SoftmaxAttentionParams Params(const AttentionIo& io) const {
    kernels::SoftmaxAttentionParams params;
    params.rows = io.rows;
    params.heads = heads_;
    params.head_dim = head_dim_;
    params.max_context = max_context_;
    params.q = io.projections;
    params.k = io.projections + width_;
    params.v = io.projections + 2 * width_;
    params.in_stride = io.stride;
    params.out = io.out;
    params.out_stride = io.out_stride;
    return params;
  }

  kernels::Backend backend_;
  int heads_;
  int head_dim_;
  int max_context_;
  int width_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<AttentionLayer>> CreateSoftmaxAttentionLayer(
    const ModelConfig& config, kernels::Backend backend) {
  return std::make_unique<SoftmaxAttentionLayer>(config, backend);
}

}  // namespace slotserve::models
