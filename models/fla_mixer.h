// The registry of fla token mixers: one entry per flash-linear-attention model_type this server
// serves as stored (docs/FLA_CHECKPOINTS.md). A family declares here everything FlaModel and its
// loaders would otherwise branch on: its config.json keys with fla's defaults and how they are
// read, its start-up line, the tensors of one layer's mixer (the projections fused after q, k
// and v, and the constants it loads once), the floats of its per-request memory, and the run of
// its kernels over one layer (step and prefill). The block around it (RMSNorms, q/k/v with
// their optional short convolutions and conv tails in the state, o_proj, the SwiGLU MLP, the
// head) is shared by every family and lives in fla_config / fla_weights / fla_model.
//
// Adding a family: its kernel header (kernels/<family>.h with reference, cpu and cuda forms),
// one models/fla_<family>_mixer.cc defining its entry, one line in fla_mixer_families.h and
// one in FlaMixerFamilies() (fla_mixer.cc), and its tests (docs/ARCHITECTURE.md, "Adding a
// model family").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "kernels/backend.h"
#include "kernels/recurrent_state.h"
#include "kernels/rms_norm.h"
#include "models/fla_config.h"
#include "models/fla_config_fields.h"
#include "models/fla_weights.h"
#include "nlohmann/json.hpp"

namespace slotserve::models {

// A projection of the normed layer input: tensor "model.layers.{i}.attn.<name>.weight".
struct FlaMixerProjection {
  std::string name;  // "s_proj"
  int64_t outputs = 0;
};

// A float tensor under "model.layers.{i}.attn.", loaded as stored.
struct FlaMixerTensor {
  std::string name;  // "g_norm.weight"
  std::vector<int64_t> shape;
};

// One layer's mixer run over `rows` rows of FlaModel's scratch: the layer's fused input
// projection is already in `projections` (q, k, v after their short convolutions, then the
// family's own projections at columns->mixer), and the family writes its output, after its
// output norm, into `attention`.
struct FlaMixerRun {
  kernels::Backend backend = kernels::Backend::kCpu;
  kernels::Stream stream = nullptr;
  const FlaConfig* config = nullptr;
  const FlaLayerWeights* layer = nullptr;
  int rows = 0;
  float* projections = nullptr;  // [rows, columns->width]
  const FlaProjectionColumns* columns = nullptr;
  const int32_t* positions = nullptr;  // device, [rows]: each row's position (RoPE's)
  float* attention = nullptr;          // [rows, value_dim]
  // One request's tokens (prefill), else one token for each stepped slot; both point at this
  // layer's mixer memory in the state arena.
  bool prefill = false;
  kernels::PrefillTarget prefill_target;
  kernels::StepTarget step_target;
};

struct FlaMixerFamily {
  // config.json's model_type; also GetModelInfo's attention_kind, the build_info metric's label
  // and the start-up line's "fla <model_type>".
  const char* model_type;
  // fla's config class for messages ("ABCConfig"), and the family as the model_type error
  // lists it ("ABC").
  const char* config_class;
  const char* title;

  // The config.json keys of the family's config class beyond FlaSharedDefaults() (or whose
  // default differs from it), with fla's default: keys outside both objects (and outside the
  // Hugging Face and kernel-choice keys) are refused by name.
  nlohmann::json (*defaults)();
  // Reads the family's own keys into `config`, after the shared ones (dimensions, norms, short
  // convs, ids) are read: refuses values fla would compute differently from us, naming the key.
  absl::Status (*read_options)(const FlaConfigFields& fields, FlaConfig& config);
  // The start-up line's mixer after "fla <model_type>, " and before ", short conv W":
  // "64 slots, 4 heads (dk 8, dv 16), rope".
  std::string (*describe)(const FlaConfig& config);

  // The projections of the normed input the family reads besides q, k and v, in fused column
  // order: tensor "model.layers.{i}.attn.<name>.weight", shape [outputs, hidden_size].
  std::vector<FlaMixerProjection> (*projections)(const FlaConfig& config);
  // The float tensors it loads once per layer, by name under "model.layers.{i}.attn." with
  // their shapes ("g_norm.weight"); FlaLayerWeights::MixerConstant finds them when run.
  std::vector<FlaMixerTensor> (*constants)(const FlaConfig& config);

  // Floats of one layer's mixer memory for one request (the kernel header's layout), the first
  // part of the layer's state; the short-conv tails follow it (FlaStateLayout).
  int64_t (*memory_floats)(const FlaConfig& config);

  // Runs the family's kernels over one layer: prefill or step as `run` says.
  void (*run)(const FlaMixerRun& run);
};

// Every family, in the order the model_type error lists them.
// The keys every fla model's config class has with the same default (dimensions, MLP, short
// convolutions, norms, ids, vocabulary, the refused hybrid and attention-residual keys). A
// family's defaults() are laid over them.
nlohmann::json FlaSharedDefaults();

const std::vector<const FlaMixerFamily*>& FlaMixerFamilies();
// The family of `model_type`, or null when none serves it.
const FlaMixerFamily* FindFlaMixerFamily(std::string_view model_type);

// The families' output norm over the run's attention rows, in place: the whole value width,
// with the layer's "g_norm.weight" when it has one; the family sets groups, eps, silu and gate.
kernels::RmsNormParams FlaOutputNorm(const FlaMixerRun& run);
// "4 heads over 2 kv heads (dk 16, dv 16)": the heads as every family's start-up line says them.
std::string DescribeFlaHeads(const FlaConfig& config);

}  // namespace slotserve::models
