#include "models/fla_config.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/json_document.h"
#include "base/status_macros.h"
#include "models/fla_config_fields.h"
#include "models/fla_mixer.h"
#include "models/shared_config_keys.h"
#include "nlohmann/json.hpp"

namespace slotserve::models {
namespace {

using nlohmann::json;

// Upper bounds that keep every derived size far from integer overflow (GSA-7B is E 4096).
constexpr int64_t kMaxFlaWidth = 1 << 16;
constexpr int64_t kMaxFlaVocab = 1 << 22;
constexpr int64_t kMaxFlaLayers = 1024;

// Written by transformers' PretrainedConfig.save_pretrained; none changes the computation.
const std::set<std::string_view>& HuggingFaceKeys() {
  static const std::set<std::string_view> keys = {"architectures",
                                                  "auto_map",
                                                  "torch_dtype",
                                                  "dtype",
                                                  "transformers_version",
                                                  "_name_or_path",
                                                  "_attn_implementation_autoset",
                                                  "use_cache",
                                                  "initializer_range",
                                                  "output_attentions",
                                                  "output_hidden_states",
                                                  "return_dict",
                                                  "pad_token_id",
                                                  "model_type"};
  return keys;
}

// Fields that only select a kernel or a training loss in fla: same inference math.
const std::set<std::string_view>& KernelChoiceKeys() {
  static const std::set<std::string_view> keys = {"fuse_norm", "fuse_swiglu", "fuse_cross_entropy",
                                                  "fuse_linear_cross_entropy", "use_l2warp"};
  return keys;
}

absl::Status ResolveDimensions(const FlaConfigFields& f, FlaConfig& c) {
  SLOTSERVE_ASSIGN_OR_RETURN(c.hidden_size, f.PositiveInt("hidden_size", kMaxFlaWidth));
  SLOTSERVE_ASSIGN_OR_RETURN(c.num_heads, f.PositiveInt("num_heads", kMaxFlaWidth));
  SLOTSERVE_ASSIGN_OR_RETURN(c.num_layers, f.PositiveInt("num_hidden_layers", kMaxFlaLayers));
  SLOTSERVE_ASSIGN_OR_RETURN(c.vocab_size, f.PositiveInt("vocab_size", kMaxFlaVocab));
  c.num_kv_heads = c.num_heads;
  // Grouped kv heads, for the families whose config has num_kv_heads (null: one per head).
  if (f.Has("num_kv_heads") && !f.IsNull("num_kv_heads")) {
    SLOTSERVE_ASSIGN_OR_RETURN(c.num_kv_heads, f.PositiveInt("num_kv_heads", kMaxFlaWidth));
    if (c.num_heads % c.num_kv_heads != 0) {
      return f.Error(
          absl::StrCat("num_kv_heads ", c.num_kv_heads, " must divide num_heads ", c.num_heads));
    }
  }
  SLOTSERVE_ASSIGN_OR_RETURN(const double expand_k, f.Number("expand_k"));
  SLOTSERVE_ASSIGN_OR_RETURN(const double expand_v, f.Number("expand_v"));
  // Python's int() of the product, as fla computes it.
  const double key_dim = std::trunc(c.hidden_size * expand_k);
  const double value_dim = std::trunc(c.hidden_size * expand_v);
  if (key_dim <= 0 || value_dim <= 0 || key_dim > kMaxFlaWidth || value_dim > kMaxFlaWidth ||
      static_cast<int>(key_dim) % c.num_heads != 0 ||
      static_cast<int>(value_dim) % c.num_heads != 0) {
    return f.Error(absl::StrCat("hidden_size * expand_k = ", key_dim,
                                " and hidden_size * expand_v = ", value_dim,
                                " must be positive multiples of num_heads ", c.num_heads));
  }
  c.key_dim = static_cast<int>(key_dim);
  c.value_dim = static_cast<int>(value_dim);
  // The memory rows, for the families whose config has num_slots (null: one per key dimension).
  if (!f.Has("num_slots")) {
    c.num_slots = 0;
  } else if (f.IsNull("num_slots")) {
    c.num_slots = c.head_k_dim();
  } else {
    SLOTSERVE_ASSIGN_OR_RETURN(c.num_slots, f.PositiveInt("num_slots", 1 << 16));
  }
  if (f.IsNull("intermediate_size")) {
    double ratio = 4;
    if (!f.IsNull("hidden_ratio")) {
      SLOTSERVE_ASSIGN_OR_RETURN(ratio, f.Number("hidden_ratio"));
    }
    // fla/modules/mlp.py GatedMLP: 2/3 of hidden * ratio, rounded up to a multiple of 256.
    const int64_t width = static_cast<int64_t>(c.hidden_size * ratio * 2 / 3);
    const int64_t rounded = 256 * ((width + 255) / 256);
    if (rounded <= 0 || rounded > kMaxFlaWidth * 4) {
      return f.Error(absl::StrCat("hidden_ratio ", ratio, " gives an MLP width of ", rounded));
    }
    c.intermediate_size = static_cast<int>(rounded);
  } else {
    SLOTSERVE_ASSIGN_OR_RETURN(c.intermediate_size,
                               f.PositiveInt("intermediate_size", kMaxFlaWidth * 4));
  }
  return absl::OkStatus();
}

absl::StatusOr<FlaConfig> Resolve(const FlaMixerFamily& family, const json& values,
                                  const std::string& source) {
  const FlaConfigFields f(values, source);
  FlaConfig c;
  c.mixer = &family;
  if (!f.IsNull("attn")) {
    return f.Error("attn (hybrid softmax-attention layers) is not supported, expected null");
  }
  if (!f.IsNull("attnres_block_size")) {
    return f.Error(absl::StrCat(
        "attnres_block_size (attention residuals) is not supported, expected null, got ",
        base::JsonForMessage(f["attnres_block_size"])));
  }
  if (f["hidden_act"] != "swish") {
    return f.Error(absl::StrCat("hidden_act ", base::JsonForMessage(f["hidden_act"]),
                                " is not supported, expected \"swish\" (the SwiGLU MLP)"));
  }
  SLOTSERVE_RETURN_IF_ERROR(ResolveDimensions(f, c));
  const json& affine = f["elementwise_affine"];
  if (!affine.is_null() && !affine.is_boolean()) {
    return f.Error(absl::StrCat("elementwise_affine must be true, false or null, got ",
                                base::JsonForMessage(affine)));
  }
  c.elementwise_affine = affine.is_boolean() && affine.get<bool>();  // fla: `if affine:`
  SLOTSERVE_ASSIGN_OR_RETURN(c.use_short_conv, f.Flag("use_short_conv"));
  SLOTSERVE_ASSIGN_OR_RETURN(c.conv_size, f.PositiveInt("conv_size", 64));
  SLOTSERVE_ASSIGN_OR_RETURN(c.tie_word_embeddings, f.Flag("tie_word_embeddings"));
  SLOTSERVE_ASSIGN_OR_RETURN(const double norm_eps, f.Number("norm_eps"));
  if (norm_eps <= 0) return f.Error(absl::StrCat("norm_eps must be > 0, got ", norm_eps));
  c.norm_eps = static_cast<float>(norm_eps);
  SLOTSERVE_RETURN_IF_ERROR(family.read_options(f, c));
  c.mlp_norm_eps = c.norm_first ? kLegacyMlpNormEps : c.norm_eps;
  SLOTSERVE_ASSIGN_OR_RETURN(c.bos_token_id, f.TokenId("bos_token_id", c.vocab_size));
  SLOTSERVE_ASSIGN_OR_RETURN(c.eos_token_id, f.TokenId("eos_token_id", c.vocab_size));
  if (!f.IsNull("max_position_embeddings")) {
    SLOTSERVE_ASSIGN_OR_RETURN(c.max_position_embeddings,
                               f.PositiveInt("max_position_embeddings", INT32_MAX));
  }
  return c;
}

// "abc, gsa (flash-linear-attention's ABC and GSA": the families the model_type error lists.
std::string ServedModelTypes() {
  std::vector<std::string> types, titles;
  for (const FlaMixerFamily* family : FlaMixerFamilies()) {
    types.push_back(family->model_type);
    titles.push_back(family->title);
  }
  std::string joined_titles = titles.back();
  if (titles.size() > 1) {
    joined_titles =
        absl::StrCat(absl::StrJoin(titles.begin(), titles.end() - 1, ", "), " and ", titles.back());
  }
  return absl::StrCat(absl::StrJoin(types, ", "), " (flash-linear-attention's ", joined_titles);
}

}  // namespace

const char* FlaModelTypeName(const FlaConfig& config) { return config.mixer->model_type; }

std::string DescribeFlaAttention(const FlaConfig& c) {
  std::string text = absl::StrCat("fla ", FlaModelTypeName(c), ", ", c.mixer->describe(c));
  if (c.use_short_conv) absl::StrAppend(&text, ", short conv ", c.conv_size);
  return text;
}

absl::StatusOr<FlaConfig> ParseFlaConfig(const std::string& json_text, const std::string& source) {
  SLOTSERVE_ASSIGN_OR_RETURN(json raw, base::ParseJsonDocument(json_text, source));
  if (!raw.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": must hold a JSON object"));
  }
  const auto type = raw.find("model_type");
  const FlaMixerFamily* family = type != raw.end() && type->is_string()
                                     ? FindFlaMixerFamily(type->get<std::string>())
                                     : nullptr;
  if (family == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": model_type must be one of ", ServedModelTypes(), " models), got ",
                     type == raw.end() ? std::string("nothing") : base::JsonForMessage(*type)));
  }
  json values = FlaSharedDefaults();
  values.update(family->defaults());
  // fla's constructors take the misspelled `exapnd_k`/`exapnd_v` but store and save
  // `expand_k`/`expand_v`; transformers then sets the saved spelling over the parameter.
  for (const char* field : {"k", "v"}) {
    const std::string typo = absl::StrCat("exapnd_", field);
    const std::string right = absl::StrCat("expand_", field);
    if (raw.contains(typo)) {
      if (!raw.contains(right)) raw[right] = raw[typo];
      raw.erase(typo);
    }
  }
  std::vector<std::string> unknown;
  for (const auto& [key, value] : raw.items()) {
    if (values.contains(key)) {
      values[key] = value;
    } else if (!HuggingFaceKeys().contains(key) && !KernelChoiceKeys().contains(key)) {
      unknown.push_back(key);
    }
  }
  if (!unknown.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": unsupported field(s) ", absl::StrJoin(unknown, ", "),
                     " for model_type \"", family->model_type, "\" (not fields of fla's ",
                     family->config_class, " this reader knows)"));
  }
  return Resolve(*family, values, source);
}

absl::StatusOr<FlaConfig> LoadFlaConfig(const std::filesystem::path& path) {
  SLOTSERVE_ASSIGN_OR_RETURN(const std::string text, ReadConfigFile(path));
  return ParseFlaConfig(text, path.string());
}

bool LooksLikeFlaConfig(const std::string& json_text) {
  const json document = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  return document.is_object() && !document.contains("format") && document.contains("model_type") &&
         document["model_type"].is_string();
}

}  // namespace slotserve::models
