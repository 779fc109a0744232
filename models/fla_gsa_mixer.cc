// fla's GSA mixer (fla/layers/gsa.py) as an entry of the fla mixer registry: config keys of
// fla's GSAConfig (with those of older fla versions), the forget-gate projection, the t2r
// feature map's weight and the whole-width output norm, the kernels of kernels/gsa_attention.h
// (docs/FLA_CHECKPOINTS.md §3).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/json_document.h"
#include "base/status_macros.h"
#include "kernels/gsa_attention.h"
#include "models/fla_mixer_families.h"

namespace slotserve::models {
namespace {

using nlohmann::json;

// The family's projection (FlaProjectionColumns::mixer).
constexpr int kGsaForgetLogits = 0;  // f_proj, [Hkv * M]

// Each feature map by its config.json name, with the kernel's form of it.
struct GsaFeatureMapEntry {
  const char* name;
  FlaFeatureMap map;
  kernels::GsaFeatureMap kernel;
};
constexpr GsaFeatureMapEntry kGsaFeatureMaps[] = {
    {"swish", FlaFeatureMap::kSwish, kernels::GsaFeatureMap::kSwish},
    {"relu", FlaFeatureMap::kRelu, kernels::GsaFeatureMap::kRelu},
    {"t2r", FlaFeatureMap::kT2r, kernels::GsaFeatureMap::kT2r},
};

const GsaFeatureMapEntry& FindGsaFeatureMap(FlaFeatureMap map) {
  return *std::find_if(std::begin(kGsaFeatureMaps), std::end(kGsaFeatureMaps),
                       [map](const GsaFeatureMapEntry& entry) { return entry.map == map; });
}

// fla's GSAConfig defaults for the fields that matter, beyond FlaSharedDefaults()
// (fla/models/gsa/configuration_gsa.py).
json FlaGsaDefaults() {
  return {{"gate_logit_normalizer", 8},
          {"clamp_min", nullptr},
          {"clamp_max", nullptr},
          {"num_kv_heads", nullptr},
          {"num_slots", 64},
          {"expand_k", 1},
          {"feature_map", "swish"},
          {"use_output_gate", false},
          {"use_norm", true},
          // Fields of older fla versions that public checkpoints may still carry.
          {"norm_first", false},
          {"gate_low_rank_dim", nullptr},
          {"use_rope", false},
          {"share_conv_kernel", false}};
}

absl::Status FlaGsaReadOptions(const FlaConfigFields& f, FlaConfig& c) {
  const json& map = f["feature_map"];
  const auto found = std::find_if(std::begin(kGsaFeatureMaps), std::end(kGsaFeatureMaps),
                                  [&](const GsaFeatureMapEntry& entry) {
                                    return map.is_string() && map.get<std::string>() == entry.name;
                                  });
  if (found == std::end(kGsaFeatureMaps)) {
    return f.Error(absl::StrCat("feature_map ", base::JsonForMessage(map),
                                " is not supported, expected one of swish, relu, t2r"));
  }
  c.feature_map = found->map;
  SLOTSERVE_ASSIGN_OR_RETURN(const double normalizer, f.Number("gate_logit_normalizer"));
  if (normalizer == 0) return f.Error("gate_logit_normalizer must not be 0");
  c.gate_logit_normalizer = static_cast<float>(normalizer);
  SLOTSERVE_ASSIGN_OR_RETURN(c.norm_first, f.Flag("norm_first"));
  SLOTSERVE_ASSIGN_OR_RETURN(const bool rope, f.Flag("use_rope"));
  if (rope) {
    return f.Error("use_rope true is not supported for gsa (fla's GSA layer has no rotary)");
  }
  SLOTSERVE_ASSIGN_OR_RETURN(const bool share_conv, f.Flag("share_conv_kernel"));
  if (share_conv && c.use_short_conv) {
    return f.Error(
        "share_conv_kernel true with use_short_conv true (a layout of fla before July 2024) is "
        "not supported");
  }
  // fla/layers/gsa.py normalises the value_dim-wide output with a hidden_size-wide weight.
  if (c.elementwise_affine && c.value_dim != c.hidden_size) {
    return f.Error(absl::StrCat("elementwise_affine with hidden_size * expand_v = ", c.value_dim,
                                " != hidden_size ", c.hidden_size,
                                ": fla's output norm weight would not fit"));
  }
  return absl::OkStatus();
}

std::string FlaGsaDescribe(const FlaConfig& c) {
  return absl::StrCat(c.num_slots, " slots, ", DescribeFlaHeads(c), ", ",
                      FindGsaFeatureMap(c.feature_map).name, " feature map");
}

std::vector<FlaMixerProjection> FlaGsaProjections(const FlaConfig& c) {
  return {{"f_proj", int64_t{c.num_kv_heads} * c.num_slots}};
}

std::vector<FlaMixerTensor> FlaGsaConstants(const FlaConfig& c) {
  std::vector<FlaMixerTensor> constants;
  if (c.feature_map == FlaFeatureMap::kT2r) {
    constants.push_back({"feature_map.layer.weight", {c.head_k_dim(), c.head_k_dim()}});
  }
  if (c.elementwise_affine) constants.push_back({"g_norm.weight", {c.hidden_size}});
  return constants;
}

int64_t FlaGsaMemoryFloats(const FlaConfig& c) {
  return kernels::GsaStateFloatsPerLayer(c.num_kv_heads, c.head_k_dim(), c.head_v_dim(),
                                         c.num_slots);
}

void FlaGsaRun(const FlaMixerRun& run) {
  const FlaConfig& c = *run.config;
  const FlaProjectionColumns& columns = *run.columns;
  kernels::GsaParams p;
  p.rows = run.rows;
  p.heads = c.num_heads;
  p.kv_heads = c.num_kv_heads;
  p.key_dim = c.head_k_dim();
  p.value_dim = c.head_v_dim();
  p.memory_rows = c.num_slots;
  p.q = run.projections + columns.q;
  p.k = run.projections + columns.k;
  p.v = run.projections + columns.v;
  p.forget_logits = run.projections + columns.mixer[kGsaForgetLogits];
  p.in_stride = columns.width;
  p.feature_map = FindGsaFeatureMap(c.feature_map).kernel;
  p.t2r_weight = run.layer->MixerConstant("feature_map.layer.weight");
  p.gate_logit_normalizer = c.gate_logit_normalizer;
  p.out = run.attention;
  p.out_stride = c.value_dim;
  if (run.prefill) {
    kernels::LaunchGsaPrefill(run.backend, p, run.prefill_target, run.stream);
  } else {
    kernels::LaunchGsaStep(run.backend, p, run.step_target, run.stream);
  }
  // rms_norm(silu(o)) over all heads together, eps fixed at 1e-5 (docs/FLA_CHECKPOINTS.md §3.3).
  kernels::RmsNormParams norm = FlaOutputNorm(run);
  norm.eps = kGsaOutputNormEps;
  norm.silu_input = true;
  kernels::LaunchRmsNorm(run.backend, norm, run.stream);
}

}  // namespace

const FlaMixerFamily& FlaGsaMixer() {
  static const FlaMixerFamily family = {.model_type = "gsa",
                                        .config_class = "GSAConfig",
                                        .title = "GSA",
                                        .defaults = FlaGsaDefaults,
                                        .read_options = FlaGsaReadOptions,
                                        .describe = FlaGsaDescribe,
                                        .projections = FlaGsaProjections,
                                        .constants = FlaGsaConstants,
                                        .memory_floats = FlaGsaMemoryFloats,
                                        .run = FlaGsaRun};
  return family;
}

}  // namespace slotserve::models
