#include "models/transformer_weights.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "models/attention_kind.h"
#include "models/model_weights.h"

namespace slotserve::models {

// Linear layers `names` (each with .weight and .bias) stacked along their outputs.
absl::StatusOr<LinearWeights> LoadStackedLinear(kernels::Backend backend,
                                                const SafetensorsFile& file,
                                                const std::string& prefix,
                                                const std::vector<std::string>& names) {
  std::vector<const SafetensorsTensor*> weights;
  std::vector<const SafetensorsTensor*> biases;
  for (const std::string& name : names) {
    weights.push_back(file.Find(absl::StrCat(prefix, name, ".weight")));
    biases.push_back(file.Find(absl::StrCat(prefix, name, ".bias")));
  }
  LinearWeights linear;
  SLOTSERVE_ASSIGN_OR_RETURN(linear.weight, UploadStackedMatrix(backend, weights));
  SLOTSERVE_ASSIGN_OR_RETURN(linear.bias, UploadConcatenatedFloats(backend, biases));
  return linear;
}

absl::StatusOr<LinearWeights> LoadLinear(kernels::Backend backend, const SafetensorsFile& file,
                                         const std::string& name) {
  return LoadStackedLinear(backend, file, "", {name});
}

absl::StatusOr<NormWeights> LoadNorm(kernels::Backend backend, const SafetensorsFile& file,
                                     const std::string& name) {
  const SafetensorsTensor* gamma = file.Find(name + ".weight");
  const SafetensorsTensor* beta = file.Find(name + ".bias");
  NormWeights norm;
  SLOTSERVE_ASSIGN_OR_RETURN(norm.gamma, UploadConcatenatedFloats(backend, {&gamma, 1}));
  SLOTSERVE_ASSIGN_OR_RETURN(norm.beta, UploadConcatenatedFloats(backend, {&beta, 1}));
  return norm;
}

absl::StatusOr<DeviceMatrix> LoadMatrix(kernels::Backend backend, const SafetensorsFile& file,
                                        const std::string& name, MatrixReaders readers) {
  const SafetensorsTensor* tensor = file.Find(name);
  return UploadStackedMatrix(backend, {&tensor, 1}, readers);
}

absl::StatusOr<BlockWeights> LoadBlockWeights(const ModelConfig& config, kernels::Backend backend,
                                              const SafetensorsFile& file,
                                              const std::string& prefix) {
  const std::string attention_prefix = prefix + "attn.";
  BlockWeights block;
  SLOTSERVE_ASSIGN_OR_RETURN(block.attn_norm, LoadNorm(backend, file, prefix + "attn_norm"));
  SLOTSERVE_ASSIGN_OR_RETURN(block.attention,
                             CreateAttentionLayer(config, backend, file, attention_prefix));
  SLOTSERVE_ASSIGN_OR_RETURN(
      block.input_projection,
      LoadStackedLinear(backend, file, attention_prefix, InputProjectionNames(config)));
  SLOTSERVE_ASSIGN_OR_RETURN(block.o_proj, LoadLinear(backend, file, attention_prefix + "o_proj"));
  SLOTSERVE_ASSIGN_OR_RETURN(block.ffn_norm, LoadNorm(backend, file, prefix + "ffn_norm"));
  SLOTSERVE_ASSIGN_OR_RETURN(block.up, LoadLinear(backend, file, prefix + "ffn.up"));
  SLOTSERVE_ASSIGN_OR_RETURN(block.down, LoadLinear(backend, file, prefix + "ffn.down"));
  return block;
}

absl::StatusOr<TransformerWeights> LoadTransformerWeights(const ModelConfig& config,
                                                          kernels::Backend backend,
                                                          const SafetensorsFile& file) {
  TransformerWeights weights;
  SLOTSERVE_ASSIGN_OR_RETURN(
      weights.tok_embed,
      LoadMatrix(backend, file, "tok_embed.weight", TokenTableReaders(config.tie_embeddings)));
  for (int layer = 0; layer < config.n_layers; ++layer) {
    SLOTSERVE_ASSIGN_OR_RETURN(
        BlockWeights block,
        LoadBlockWeights(config, backend, file, absl::StrCat("layers.", layer, ".")));
    weights.blocks.push_back(std::move(block));
  }
  SLOTSERVE_ASSIGN_OR_RETURN(weights.final_norm, LoadNorm(backend, file, "final_norm"));
  if (!config.tie_embeddings) {
    SLOTSERVE_ASSIGN_OR_RETURN(weights.lm_head,
                               LoadMatrix(backend, file, "lm_head.weight", MatrixReaders::kLinear));
  }
  kernels::Synchronize(backend);
  return weights;
}

}  // namespace slotserve::models
