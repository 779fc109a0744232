// ABC: the fused projection is [q | k | v | slot logits (H*M)].
#include "kernels/abc_attention.h"
#include "models/attention_layer.h"

namespace slotserve::models {
namespace {

class AbcAttentionLayer final : public AttentionLayer {
 public:
  AbcAttentionLayer(const ModelConfig& config, kernels::Backend backend)
      : backend_(backend),
        heads_(config.n_heads),
        head_dim_(config.head_dim()),
        slots_(config.attention.slots),
        width_(config.d_model) {}

  const std::vector<std::string>& projection_names() const override {
    static const std::vector<std::string> kNames = {"q_proj", "k_proj", "v_proj", "slot_proj"};
    return kNames;
  }

  void Prefill(const AttentionIo& io, const kernels::PrefillTarget& target) const override {
    kernels::LaunchAbcPrefill(backend_, Params(io), target);
  }
  void Step(const AttentionIo& io, const kernels::StepTarget& target) const override {
    kernels::LaunchAbcStep(backend_, Params(io), target);
  }

 private:
  kernels::AbcParams Params(const AttentionIo& io) const {
    kernels::AbcParams params;
    params.rows = io.rows;
    params.heads = heads_;
    params.head_dim = head_dim_;
    params.slots = slots_;
    params.q = io.projections;
    params.k = io.projections + width_;
    params.v = io.projections + 2 * width_;
    params.slot_logits = io.projections + 3 * width_;
    params.in_stride = io.stride;
    params.out = io.out;
    params.out_stride = io.out_stride;
    return params;
  }

  kernels::Backend backend_;
  int heads_;
  int head_dim_;
  int slots_;
  int width_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<AttentionLayer>> CreateAbcAttentionLayer(const ModelConfig& config,
                                                                        kernels::Backend backend) {
  return std::make_unique<AbcAttentionLayer>(config, backend);
}

}  // namespace slotserve::models
