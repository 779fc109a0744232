// ABC with the learned exp control: the fused projection is [q | k | v | memory logits
// (slot_proj, H*M)]. The other controls are abc_control_attention_layer.cc.
#include "kernels/abc_attention.h"
#include "models/attention_layer.h"

namespace slotserve::models {
namespace {

class AbcAttentionLayer final
    : public KernelAttentionLayer<kernels::AbcParams, kernels::LaunchAbcPrefill,
                                  kernels::LaunchAbcStep> {
 public:
  using KernelAttentionLayer::KernelAttentionLayer;

 private:
  void FillKindParams(const AttentionIo& io, kernels::AbcParams& params) const override {
    params.memory_rows = config().attention.memory_rows;
    params.memory_logits = io.projections + 3 * config().d_model;
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<AttentionLayer>> CreateAbcAttentionLayer(
    const ModelConfig& config, kernels::Backend backend, const SafetensorsFile& file,
    const std::string& attention_prefix) {
  if (config.attention.control != MemoryControl::kLearnedExp) {
    return CreateAbcControlAttentionLayer(config, backend, file, attention_prefix);
  }
  return std::make_unique<AbcAttentionLayer>(config, backend);
}

}  // namespace slotserve::models
