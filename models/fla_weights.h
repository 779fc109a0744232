// The tensors of an fla `abc` / `gsa` checkpoint (docs/FLA_CHECKPOINTS.md §2): the names and
// shapes its config implies, checked against the files (missing, unexpected and mis-shaped
// tensors refused by name), the pre-2025 layout mapped onto today's names, and the weights
// uploaded to a backend in the form FlaModel runs them: matrices in their file dtype
// (F32/F16/BF16 stay as stored), the projections a layer applies to the same input fused into
// one GEMM.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/backend.h"
#include "kernels/device_memory.h"
#include "models/device_weights.h"
#include "models/fla_config.h"
#include "models/weight_shards.h"

namespace slotserve::models {

// Every tensor the config implies, by today's fla name, with its shape. lm_head.weight is
// listed even when tied (it is optional then).
std::map<std::string, std::vector<int64_t>> ExpectedFlaTensors(const FlaConfig& config);

// Refuses a checkpoint whose tensors are not exactly ExpectedFlaTensors (after the legacy
// names are mapped), naming each problem, or that holds a dtype other than F32/F16/BF16.
absl::Status CheckFlaTensors(const FlaConfig& config, const WeightShards& shards);

struct FlaLayerWeights {
  kernels::DeviceBuffer attn_norm;  // [E]
  // x -> [q | k | v | the mixer family's projections (FlaMixerFamily::projections)]
  DeviceMatrix input_projection;
  // Short convolutions, [channels, W] each (empty without use_short_conv).
  kernels::DeviceBuffer q_conv, k_conv, v_conv;
  // The mixer family's constants (FlaMixerFamily::constants), by name: "g_norm.weight".
  std::vector<std::pair<std::string, kernels::DeviceBuffer>> mixer_constants;
  DeviceMatrix o_proj;             // [E, value_dim]
  kernels::DeviceBuffer mlp_norm;  // [E]
  DeviceMatrix gate_up;            // [2I, E]: gate rows, then up rows
  DeviceMatrix down;               // [E, I]

  // The constant `name` on the device, or null when the layer has none by that name.
  const float* MixerConstant(std::string_view name) const;
};

struct FlaWeights {
  DeviceMatrix embeddings;              // [V, E]
  std::optional<DeviceMatrix> lm_head;  // absent when tied
  kernels::DeviceBuffer final_norm;     // [E]
  std::vector<FlaLayerWeights> layers;

  const DeviceMatrix& head() const { return lm_head ? *lm_head : embeddings; }
};

// Columns of the fused input projection, in order.
struct FlaProjectionColumns {
  int q = 0, k = 0, v = 0;
  std::vector<int> mixer;  // the family's projections, in its order
  int width = 0;
};
FlaProjectionColumns FlaInputColumns(const FlaConfig& config);

// `shards` must have passed CheckFlaTensors.
absl::StatusOr<FlaWeights> LoadFlaWeights(const FlaConfig& config, kernels::Backend backend,
                                          const WeightShards& shards);

}  // namespace slotserve::models
