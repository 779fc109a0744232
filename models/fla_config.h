// config.json of a flash-linear-attention (fla) checkpoint in the Hugging Face layout, whose
// `model_type` names one of the mixer families of models/fla_mixer.h (docs/FLA_CHECKPOINTS.md
// §1), read strictly: every key is used, known to have no effect on inference, or refused by
// name, so a checkpoint that needs something we do not compute never loads silently wrong. The same
// rules as the float64 reference's python/slotserve_ref/fla/config.py.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace slotserve::models {

struct FlaMixerFamily;

// GSA's feature map on q and k (fla/modules/feature_map.py).
enum class FlaFeatureMap { kSwish, kRelu, kT2r };

// fla's constants the config cannot change (docs/FLA_CHECKPOINTS.md §3).
inline constexpr float kFlaRopeBase = 10000.0f;
inline constexpr float kGsaOutputNormEps = 1e-5f;  // rms_norm_linear's default, not norm_eps
inline constexpr float kLegacyMlpNormEps = 1e-5f;  // the pre-2025 GatedMLP's norm, likewise

struct FlaConfig {
  // The model_type's mixer family (never null once parsed): what the loaders and FlaModel ask
  // about the mixer's keys, tensors, state and kernels.
  const FlaMixerFamily* mixer = nullptr;
  int vocab_size = 0;
  int hidden_size = 0;  // E
  int num_layers = 0;
  int num_heads = 0;     // H
  int num_kv_heads = 0;  // Hkv (abc: = H)
  int num_slots = 0;     // M
  int key_dim = 0;       // int(E * expand_k), all query heads together
  int value_dim = 0;     // int(E * expand_v)
  int intermediate_size = 0;
  float norm_eps = 1e-6f;
  float mlp_norm_eps = 1e-6f;  // norm_eps, or 1e-5 in the legacy norm_first layout
  bool use_short_conv = false;
  int conv_size = 4;
  bool use_rope = false;           // abc only
  std::optional<float> clamp_min;  // abc only: bounds of the slot logits
  std::optional<float> clamp_max;
  float gate_logit_normalizer = 1.0f;  // gsa only
  FlaFeatureMap feature_map = FlaFeatureMap::kSwish;
  bool elementwise_affine = true;  // whether the attention's output norm has a weight
  bool tie_word_embeddings = false;
  bool norm_first = false;  // gsa legacy layout: norms inside attn and mlp
  int bos_token_id = -1;    // -1: none
  int eos_token_id = -1;
  // The context the checkpoint was trained for, when config.json says (null or absent: 0).
  // The model itself has no position limit; the server serves this as its longest context.
  int max_position_embeddings = 0;

  int head_k_dim() const { return key_dim / num_heads; }
  int head_v_dim() const { return value_dim / num_heads; }
  int kv_key_dim() const { return num_kv_heads * head_k_dim(); }
  int kv_value_dim() const { return num_kv_heads * head_v_dim(); }
};

// The checkpoint's model_type ("abc", "gsa"): its mixer family's name in ModelInfo's
// attention_kind, the metrics and the start-up line.
const char* FlaModelTypeName(const FlaConfig& config);

// The start-up line's attention: "fla gsa, 64 slots, 4 heads over 2 kv heads, swish feature
// map, short conv 4".
std::string DescribeFlaAttention(const FlaConfig& config);

// Parses config.json text; errors are prefixed with `source` and name the field.
absl::StatusOr<FlaConfig> ParseFlaConfig(const std::string& json_text,
                                         const std::string& source = "config.json");
absl::StatusOr<FlaConfig> LoadFlaConfig(const std::filesystem::path& path);

// Whether config.json text looks like an fla checkpoint's (a string model_type and no
// slotserve "format"), so the loader knows which parser's errors to report.
bool LooksLikeFlaConfig(const std::string& json_text);

}  // namespace slotserve::models
