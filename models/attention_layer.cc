#include "models/attention_layer.h"

#include "models/attention_kind.h"

namespace slotserve::models {

absl::StatusOr<std::unique_ptr<AttentionLayer>> CreateAttentionLayer(
    const ModelConfig& config, kernels::Backend backend, const SafetensorsFile& file,
    const std::string& attention_prefix) {
  return DescribeAttentionKind(config.attention.kind)
      .create_layer(config, backend, file, attention_prefix);
}

}  // namespace slotserve::models
