// The tensors a model directory's model.safetensors must hold for a given config (DESIGN §2),
// and the check that it holds exactly those, with the right shapes and supported dtypes.
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

// "layers.3.attn."
std::string AttentionPrefix(int layer);

}  // namespace slotserve::models
