#include "models/cross_attention_weights.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "models/cross_attention_kind.h"
#include "models/seq2seq_weights.h"

namespace slotserve::models {
absl::StatusOr<CrossAttentionWeights> LoadCrossAttentionWeights(const Seq2seqConfig& config,
                                                                kernels::Backend backend,
                                                                const SafetensorsFile& file,
                                                                int layer) {
  const std::string prefix = DecoderLayerPrefix(layer);
  const std::string cross = prefix + "cross.";
  CrossAttentionWeights weights;
  SLOTSERVE_ASSIGN_OR_RETURN(weights.cross_norm, LoadNorm(backend, file, prefix + "cross_norm"));
  SLOTSERVE_ASSIGN_OR_RETURN(weights.q_proj, LoadLinear(backend, file, cross + "q_proj"));
  SLOTSERVE_ASSIGN_OR_RETURN(weights.kv_proj,
                             LoadStackedLinear(backend, file, cross, {"k_proj", "v_proj"}));
  SLOTSERVE_ASSIGN_OR_RETURN(weights.o_proj, LoadLinear(backend, file, cross + "o_proj"));
  const CrossAttentionKindDescription& kind = DescribeCrossAttentionKind(config.cross.kind);
  if (kind.load_weights != nullptr) {
    SLOTSERVE_RETURN_IF_ERROR(kind.load_weights(config, backend, file, cross, weights));
  }
  return weights;
}

}  // namespace slotserve::models
