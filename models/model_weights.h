// The tensors a model directory's model.safetensors must hold for a given config
// (docs/MODEL_FORMAT.md), and the check that it holds exactly those, with the right shapes and
// supported dtypes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "models/model_config.h"
#include "models/safetensors_file.h"

namespace slotserve::models {

struct ExpectedTensor {
  std::string name;
  std::vector<int64_t> shape;
};

// Every tensor of the model, in a stable order (embedding, layers 0..n-1, final norm, head).
std::vector<ExpectedTensor> ExpectedTensors(const ModelConfig& config);

// Refuses, by name, the first missing tensor, tensor of the wrong shape, or tensor the config
// has no use for.
absl::Status CheckWeights(const ModelConfig& config, const SafetensorsFile& file);

// Refuses, by name, the first tensor of `expected` that `file` lacks or holds in another shape,
// then the first tensor of `file` not in `expected`; `model` says what the config describes in
// that message ("a luna model").
absl::Status CheckTensorTable(const std::vector<ExpectedTensor>& expected,
                              const SafetensorsFile& file, const std::string& model);

// Appenders for tensor tables: a Linear's weight [out, in] and bias [out]; a layer norm's
// weight and bias [dim]; one §2 block (attn_norm, attention by config's kind, ffn_norm, ffn)
// under `prefix` ("layers.3.", "encoder.layers.0.").
void AddLinearTensors(std::vector<ExpectedTensor>& tensors, const std::string& name, int64_t out,
                      int64_t in);
void AddNormTensors(std::vector<ExpectedTensor>& tensors, const std::string& name, int64_t dim);
void AddBlockTensors(std::vector<ExpectedTensor>& tensors, const ModelConfig& config,
                     const std::string& prefix);

// "layers.3.attn."
std::string AttentionPrefix(int layer);

}  // namespace slotserve::models
