// fla's ABC mixer (fla/layers/abc.py) as an entry of the fla mixer registry: config keys of
// fla's ABCConfig, the slot-logit and gate projections, the per-head output norm weight, the
// kernels of kernels/abc_attention.h with RoPE before them (docs/FLA_CHECKPOINTS.md §3).
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kernels/abc_attention.h"
#include "kernels/rotary.h"
#include "models/fla_mixer_families.h"

namespace slotserve::models {
namespace {

using nlohmann::json;

// The family's projections, in fused column order (FlaProjectionColumns::mixer).
constexpr int kAbcSlotLogits = 0;  // s_proj, [H * M]
constexpr int kAbcGate = 1;        // g_proj, [value_dim]

// fla's ABCConfig defaults for the fields that matter, beyond FlaSharedDefaults()
// (fla/models/abc/configuration_abc.py).
json FlaAbcDefaults() {
  return {{"gate_low_rank_dim", 16}, {"clamp_min", -32}, {"clamp_max", 32},
          {"num_slots", 64},         {"expand_k", 0.5},  {"use_rope", true}};
}

absl::Status FlaAbcReadOptions(const FlaConfigFields& f, FlaConfig& c) {
  SLOTSERVE_ASSIGN_OR_RETURN(c.use_rope, f.Flag("use_rope"));
  // fla/modules/rotary.py rotates pairs (i, i + d/2).
  if (c.use_rope && c.head_k_dim() % 2 != 0) {
    return f.Error(absl::StrCat("use_rope needs an even head key dimension, got ", c.head_k_dim()));
  }
  SLOTSERVE_ASSIGN_OR_RETURN(c.clamp_min, f.NumberOrNull("clamp_min"));
  SLOTSERVE_ASSIGN_OR_RETURN(c.clamp_max, f.NumberOrNull("clamp_max"));
  return absl::OkStatus();
}

std::string FlaAbcDescribe(const FlaConfig& c) {
  return absl::StrCat(c.num_slots, " slots, ", DescribeFlaHeads(c), c.use_rope ? ", rope" : "");
}

std::vector<FlaMixerProjection> FlaAbcProjections(const FlaConfig& c) {
  return {{"s_proj", int64_t{c.num_heads} * c.num_slots}, {"g_proj", c.value_dim}};
}

std::vector<FlaMixerTensor> FlaAbcConstants(const FlaConfig& c) {
  if (!c.elementwise_affine) return {};
  return {{"g_norm.weight", {c.head_v_dim()}}};
}

int64_t FlaAbcMemoryFloats(const FlaConfig& c) {
  return kernels::AbcStateFloatsPerLayer(c.num_heads, c.head_k_dim(), c.head_v_dim(), c.num_slots);
}

void FlaAbcRun(const FlaMixerRun& run) {
  const FlaConfig& c = *run.config;
  const FlaProjectionColumns& columns = *run.columns;
  const int64_t stride = columns.width;
  if (c.use_rope) {
    kernels::RotaryParams rope;
    rope.stride = stride;
    rope.rows = run.rows;
    rope.heads = c.num_heads;
    rope.head_dim = c.head_k_dim();
    rope.positions = run.positions;
    rope.base = kFlaRopeBase;
    for (const int column : {columns.q, columns.k}) {
      rope.x = run.projections + column;
      kernels::LaunchRotary(run.backend, rope, run.stream);
    }
  }
  kernels::AbcParams p;
  p.rows = run.rows;
  p.heads = c.num_heads;
  p.head_dim = c.head_k_dim();
  p.value_dim = c.head_v_dim();
  p.memory_rows = c.num_slots;
  p.q = run.projections + columns.q;
  p.k = run.projections + columns.k;
  p.v = run.projections + columns.v;
  p.memory_logits = run.projections + columns.mixer[kAbcSlotLogits];
  p.in_stride = stride;
  if (c.clamp_min) p.logit_min = *c.clamp_min;
  if (c.clamp_max) p.logit_max = *c.clamp_max;
  p.out = run.attention;
  p.out_stride = c.value_dim;
  if (run.prefill) {
    kernels::LaunchAbcPrefill(run.backend, p, run.prefill_target, run.stream);
  } else {
    kernels::LaunchAbcStep(run.backend, p, run.step_target, run.stream);
  }
  // rms_norm(o_h) * g_norm * silu(g_h) per head (fla's FusedRMSNormGated).
  kernels::RmsNormParams norm = FlaOutputNorm(run);
  norm.groups = c.num_heads;
  norm.group_dim = c.head_v_dim();
  norm.eps = c.norm_eps;
  norm.gate = run.projections + columns.mixer[kAbcGate];
  norm.gate_stride = stride;
  kernels::LaunchRmsNorm(run.backend, norm, run.stream);
}

}  // namespace

const FlaMixerFamily& FlaAbcMixer() {
  static const FlaMixerFamily family = {.model_type = "abc",
                                        .config_class = "ABCConfig",
                                        .title = "ABC",
                                        .defaults = FlaAbcDefaults,
                                        .read_options = FlaAbcReadOptions,
                                        .describe = FlaAbcDescribe,
                                        .projections = FlaAbcProjections,
                                        .constants = FlaAbcConstants,
                                        .memory_floats = FlaAbcMemoryFloats,
                                        .run = FlaAbcRun};
  return family;
}

}  // namespace slotserve::models
