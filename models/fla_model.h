// A flash-linear-attention checkpoint served as it is stored (docs/FLA_CHECKPOINTS.md):
// config.json with fla's keys, weights in one file or in shards, fla's tensor names. The block
// is fla's (RMSNorm, SwiGLU MLP, no positions added to the embedding); the mixer is the one of
// the checkpoint's model_type in the fla mixer registry (models/fla_mixer.h: ABC, GSA), after
// optional short causal convolutions of q, k and v whose last W−1 inputs live in the request's
// state slot.
//
// State per request and layer: the mixer's memory (its family's memory_floats: ABC K~ [M, dk],
// V~ [M, dv], z, m per head; GSA hk [dk, M], hv [M, dv] per kv head), then the q, k and v
// convolution windows; fp32, all
// zeros when empty, so the arena's copy / save / restore / reset serve it unchanged. RoPE's
// position is the arena's position of the slot.
//
// Runs through the kernel dispatchers on any backend; decode steps are launched directly (no
// captured graphs yet), and selection happens on the host logits (LanguageModel's defaults).
#pragma once

#include <filesystem>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/device_memory.h"
#include "kernels/device_stream.h"
#include "kernels/recurrent_state.h"
#include "models/fla_config.h"
#include "models/fla_weights.h"
#include "models/language_model.h"
#include "models/step_slots.h"

namespace slotserve::models {

// Where each part of one layer's state is, in floats from the layer's start.
struct FlaLayerStateLayout {
  int64_t mixer = 0;  // the mixer's memory, at offset 0
  int64_t q_conv = 0, k_conv = 0, v_conv = 0;
  int64_t floats = 0;  // the whole layer
};
FlaLayerStateLayout FlaStateLayout(const FlaConfig& config);

class FlaModel final : public LanguageModel {
 public:
  static constexpr int kMaxRowsPerPass = 256;

  // Loads config.json and the weights of an fla checkpoint directory.
  static absl::StatusOr<std::unique_ptr<FlaModel>> Load(const std::filesystem::path& dir,
                                                        kernels::Backend backend);

  const ModelConfig& config() const override { return config_; }
  const FlaConfig* fla() const override { return &fla_; }
  kernels::Backend backend() const override { return backend_; }
  int64_t state_bytes_per_request() const override;
  int32_t max_positions() const override;
  absl::StatusOr<std::unique_ptr<StateArena>> AllocateStates(int num_slots) const override;
  absl::Status Prefill(StateArena& states, int slot, std::span<const int32_t> tokens,
                       LogitsWanted wanted, std::span<float> logits) override;
  absl::Status Step(StateArena& states, std::span<const int32_t> slots,
                    std::span<const int32_t> tokens, std::span<float> logits) override;

 private:
  struct Scratch {
    int rows = 0;
    int logit_rows = 0;
    kernels::DeviceBuffer tokens, positions, slots;  // int32 [rows]
    kernels::DeviceBuffer hidden, normed, projections, attention, ffn, logits;
  };
  // Runs one layer's mixer over scratch rows: `prefill` when one request's tokens, else a step
  // over scratch slots/positions.
  struct MixerCall {
    bool prefill = false;
    kernels::PrefillTarget prefill_target;
    kernels::StepTarget step_target;
  };

  FlaModel(const FlaConfig& fla, const ModelConfig& config, kernels::Backend backend,
           FlaWeights weights, kernels::DeviceStream stream);

  absl::Status Reserve(int rows, int logit_rows);
  absl::Status CheckArena(const StateArena& states, const char* call) const;
  absl::Status PrefillPass(StateArena& states, int slot, std::span<const int32_t> tokens,
                           bool every_logit, bool last_logit, std::span<float> logits);
  void RunLayers(int rows, MixerCall call, kernels::Stream stream);
  // The layer's input projection and short convolutions, then its mixer family's run.
  void RunMixer(const FlaLayerWeights& layer, int layer_index, int rows, MixerCall call,
                kernels::Stream stream);
  void ComputeLogits(int first_row, int rows, kernels::Stream stream);

  FlaConfig fla_;
  ModelConfig config_;
  kernels::Backend backend_;
  FlaWeights weights_;
  FlaProjectionColumns columns_;
  FlaLayerStateLayout layout_;
  kernels::DeviceStream stream_;
  Scratch scratch_;
  // Slots inside the arena, distinct, below max_positions: checked before a step runs.
  StepSlotCheck slot_check_;
  // The stepped slots' positions (RoPE's), staged for the device.
  std::vector<int32_t> step_positions_;
};

}  // namespace slotserve::models
