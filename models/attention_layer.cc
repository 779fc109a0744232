#include "models/attention_layer.h"

#include "kernels/abc_attention.h"
#include "kernels/luna_attention.h"
#include "kernels/rfa_attention.h"
#include "kernels/softmax_attention.h"

namespace slotserve::models {

int64_t AttentionStateFloatsPerLayer(const ModelConfig& config) {
  const AttentionConfig& attention = config.attention;
  switch (attention.kind) {
    case AttentionKind::kAbc:
      return kernels::AbcStateFloatsPerLayer(config.n_heads, config.head_dim(), attention.memory_rows);
    case AttentionKind::kRfa:
      return kernels::RfaStateFloatsPerLayer(config.n_heads, config.head_dim(), attention.features);
    case AttentionKind::kLuna:
      return kernels::LunaStateFloatsPerLayer(config.n_heads, config.head_dim(), attention.length);
    case AttentionKind::kSoftmax:
      return kernels::SoftmaxStateFloatsPerLayer(config.n_heads, config.head_dim(),
                                                 attention.max_context);
  }
  return 0;
}

absl::StatusOr<std::unique_ptr<AttentionLayer>> CreateAttentionLayer(const ModelConfig& config,
                                                                     kernels::Backend backend,
                                                                     const SafetensorsFile& file,
                                                                     int layer) {
  switch (config.attention.kind) {
    case AttentionKind::kAbc:
      return CreateAbcAttentionLayer(config, backend);
    case AttentionKind::kRfa:
      return CreateRfaAttentionLayer(config, backend, file, layer);
    case AttentionKind::kLuna:
      return CreateLunaAttentionLayer(config, backend, file, layer);
    case AttentionKind::kSoftmax:
      return CreateSoftmaxAttentionLayer(config, backend);
  }
  return absl::InternalError("unknown attention kind");
}

}  // namespace slotserve::models
