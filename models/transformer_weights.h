// A loaded model's weights on its backend's device, arranged for the forward pass: each
// layer's attention input projections fused into one matrix, per-kind constants held by the
// layer's AttentionLayer.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/backend.h"
#include "kernels/device_memory.h"
#include "models/attention_layer.h"
#include "models/device_weights.h"
#include "models/model_config.h"
#include "models/safetensors_file.h"

namespace slotserve::models {

struct LinearWeights {
  DeviceMatrix weight;         // [out, in]
  kernels::DeviceBuffer bias;  // [out] F32
};

struct NormWeights {
  kernels::DeviceBuffer gamma;  // [E] F32
  kernels::DeviceBuffer beta;   // [E] F32
};

struct BlockWeights {
  NormWeights attn_norm;
  std::unique_ptr<AttentionLayer> attention;
  // The kind's input projections stacked: one GEMM gives every input of the attention kernel.
  LinearWeights input_projection;
  LinearWeights o_proj;
  NormWeights ffn_norm;
  LinearWeights up;
  LinearWeights down;
};

struct TransformerWeights {
  DeviceMatrix tok_embed;  // [V, E]
  std::vector<BlockWeights> blocks;
  NormWeights final_norm;
  DeviceMatrix lm_head;  // [V, E]; empty when tie_embeddings

  const DeviceMatrix& head() const { return lm_head.rows > 0 ? lm_head : tok_embed; }
};

// Loaders of single pieces, by tensor name (`file` already checked): linear layers `names`
// under `prefix` (each with .weight and .bias) stacked along their outputs; one linear layer;
// a layer norm (.weight, .bias); a matrix as stored, read by `readers`.
absl::StatusOr<LinearWeights> LoadStackedLinear(kernels::Backend backend,
                                                const SafetensorsFile& file,
                                                const std::string& prefix,
                                                const std::vector<std::string>& names);
absl::StatusOr<LinearWeights> LoadLinear(kernels::Backend backend, const SafetensorsFile& file,
                                         const std::string& name);
absl::StatusOr<NormWeights> LoadNorm(kernels::Backend backend, const SafetensorsFile& file,
                                     const std::string& name);
absl::StatusOr<DeviceMatrix> LoadMatrix(kernels::Backend backend, const SafetensorsFile& file,
                                        const std::string& name, MatrixReaders readers);

// One §2 block whose tensors start with `prefix` ("layers.3.", or "encoder.layers.0." /
// "decoder.layers.0." in an encoder-decoder model); `file` must already have passed its
// model's tensor check.
absl::StatusOr<BlockWeights> LoadBlockWeights(const ModelConfig& config, kernels::Backend backend,
                                              const SafetensorsFile& file,
                                              const std::string& prefix);

// `file` must already have passed CheckWeights(config, file).
absl::StatusOr<TransformerWeights> LoadTransformerWeights(const ModelConfig& config,
                                                          kernels::Backend backend,
                                                          const SafetensorsFile& file);

}  // namespace slotserve::models
