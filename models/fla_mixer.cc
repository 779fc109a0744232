#include "models/fla_mixer.h"

#include "absl/strings/str_cat.h"
#include "models/fla_mixer_families.h"

namespace slotserve::models {

nlohmann::json FlaSharedDefaults() {
  return {{"hidden_size", 2048},
          {"hidden_ratio", 4},
          {"intermediate_size", nullptr},
          {"num_hidden_layers", 24},
          {"num_heads", 4},
          {"use_short_conv", false},
          {"conv_size", 4},
          {"expand_v", 1},
          {"hidden_act", "swish"},
          {"elementwise_affine", true},
          {"norm_eps", 1e-6},
          {"attn", nullptr},
          {"bos_token_id", 1},
          {"eos_token_id", 2},
          // fla's models have no position limit; the trained context, served as the longest.
          {"max_position_embeddings", nullptr},
          {"tie_word_embeddings", false},
          {"vocab_size", 32000},
          {"attnres_block_size", nullptr}};
}

const std::vector<const FlaMixerFamily*>& FlaMixerFamilies() {
  static const auto* const families =
      new std::vector<const FlaMixerFamily*>{&FlaAbcMixer(), &FlaGsaMixer()};
  return *families;
}

const FlaMixerFamily* FindFlaMixerFamily(std::string_view model_type) {
  for (const FlaMixerFamily* family : FlaMixerFamilies()) {
    if (model_type == family->model_type) return family;
  }
  return nullptr;
}

kernels::RmsNormParams FlaOutputNorm(const FlaMixerRun& run) {
  const int value_dim = run.config->value_dim;
  kernels::RmsNormParams norm;
  norm.x = run.attention;
  norm.x_stride = value_dim;
  norm.y = run.attention;  // in place
  norm.y_stride = value_dim;
  norm.rows = run.rows;
  norm.groups = 1;
  norm.group_dim = value_dim;
  norm.weight = run.layer->MixerConstant("g_norm.weight");
  return norm;
}

std::string DescribeFlaHeads(const FlaConfig& c) {
  std::string text = absl::StrCat(c.num_heads, " heads");
  if (c.num_kv_heads != c.num_heads) absl::StrAppend(&text, " over ", c.num_kv_heads, " kv heads");
  absl::StrAppend(&text, " (dk ", c.head_k_dim(), ", dv ", c.head_v_dim(), ")");
  return text;
}

}  // namespace slotserve::models
