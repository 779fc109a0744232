#include "models/fla_config.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "models/json_document.h"
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

// fla's config classes' defaults for the fields that matter (fla/models/{abc,gsa}/
// configuration_{abc,gsa}.py).
json AbcDefaults() {
  return {{"hidden_size", 2048},
          {"gate_low_rank_dim", 16},
          {"clamp_min", -32},
          {"clamp_max", 32},
          {"hidden_ratio", 4},
          {"intermediate_size", nullptr},
          {"num_hidden_layers", 24},
          {"num_heads", 4},
          {"num_slots", 64},
          {"use_short_conv", false},
          {"conv_size", 4},
          {"expand_k", 0.5},
          {"expand_v", 1},
          {"hidden_act", "swish"},
          {"elementwise_affine", true},
          {"norm_eps", 1e-6},
          {"use_rope", true},
          {"attn", nullptr},
          {"bos_token_id", 1},
          {"eos_token_id", 2},
          // fla's models have no position limit; the trained context, served as the longest.
          {"max_position_embeddings", nullptr},
          {"tie_word_embeddings", false},
          {"vocab_size", 32000},
          {"attnres_block_size", nullptr}};
}

json GsaDefaults() {
  return {{"hidden_size", 2048},
          {"gate_logit_normalizer", 8},
          {"clamp_min", nullptr},
          {"clamp_max", nullptr},
          {"hidden_ratio", 4},
          {"intermediate_size", nullptr},
          {"num_hidden_layers", 24},
          {"num_heads", 4},
          {"num_kv_heads", nullptr},
          {"num_slots", 64},
          {"use_short_conv", false},
          {"conv_size", 4},
          {"expand_k", 1},
          {"expand_v", 1},
          {"feature_map", "swish"},
          {"use_output_gate", false},
          {"use_norm", true},
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
          {"attnres_block_size", nullptr},
          // Fields of older fla versions that public checkpoints may still carry.
          {"norm_first", false},
          {"gate_low_rank_dim", nullptr},
          {"use_rope", false},
          {"share_conv_kernel", false}};
}

class FieldReader {
 public:
  FieldReader(const json& values, const std::string& source) : values_(values), source_(source) {}

  absl::Status Error(const std::string& message) const {
    return absl::InvalidArgumentError(absl::StrCat(source_, ": ", message));
  }
  const json& operator[](const char* key) const { return values_.at(key); }
  bool IsNull(const char* key) const { return values_.at(key).is_null(); }

  absl::StatusOr<int> PositiveInt(const char* key, int64_t limit) const {
    const json& v = values_.at(key);
    if (!v.is_number_integer() || v.get<int64_t>() <= 0 || v.get<int64_t>() > limit) {
      return Error(absl::StrCat(key, " must be a positive integer (at most ", limit, "), got ",
                                JsonForMessage(v)));
    }
    return static_cast<int>(v.get<int64_t>());
  }
  absl::StatusOr<double> Number(const char* key) const {
    const json& v = values_.at(key);
    if (!v.is_number() || !std::isfinite(v.get<double>())) {
      return Error(absl::StrCat(key, " must be a number, got ", JsonForMessage(v)));
    }
    return v.get<double>();
  }
  absl::StatusOr<std::optional<float>> NumberOrNull(const char* key) const {
    if (IsNull(key)) return std::optional<float>();
    SLOTSERVE_ASSIGN_OR_RETURN(const double value, Number(key));
    return std::optional<float>(static_cast<float>(value));
  }
  absl::StatusOr<bool> Flag(const char* key) const {
    const json& v = values_.at(key);
    if (!v.is_boolean()) {
      return Error(absl::StrCat(key, " must be true or false, got ", JsonForMessage(v)));
    }
    return v.get<bool>();
  }
  // A token id: an integer in [0, vocab) or null (none).
  absl::StatusOr<int> TokenId(const char* key, int vocab) const {
    const json& v = values_.at(key);
    if (v.is_null()) return -1;
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() >= vocab) {
      return Error(absl::StrCat(key, " must be null or a token id in [0, ", vocab, "), got ",
                                JsonForMessage(v)));
    }
    return static_cast<int>(v.get<int64_t>());
  }

 private:
  const json& values_;
  const std::string& source_;
};

absl::Status ResolveDimensions(const FieldReader& f, FlaConfig& c) {
  SLOTSERVE_ASSIGN_OR_RETURN(c.hidden_size, f.PositiveInt("hidden_size", kMaxFlaWidth));
  SLOTSERVE_ASSIGN_OR_RETURN(c.num_heads, f.PositiveInt("num_heads", kMaxFlaWidth));
  SLOTSERVE_ASSIGN_OR_RETURN(c.num_layers, f.PositiveInt("num_hidden_layers", kMaxFlaLayers));
  SLOTSERVE_ASSIGN_OR_RETURN(c.vocab_size, f.PositiveInt("vocab_size", kMaxFlaVocab));
  c.num_kv_heads = c.num_heads;
  if (c.is_gsa() && !f.IsNull("num_kv_heads")) {
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
  if (f.IsNull("num_slots")) {
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

absl::Status ResolveGsa(const FieldReader& f, FlaConfig& c) {
  const json& map = f["feature_map"];
  const std::vector<std::pair<std::string, FlaFeatureMap>> maps = {{"swish", FlaFeatureMap::kSwish},
                                                                   {"relu", FlaFeatureMap::kRelu},
                                                                   {"t2r", FlaFeatureMap::kT2r}};
  const auto found = std::find_if(maps.begin(), maps.end(), [&](const auto& entry) {
    return map.is_string() && map.get<std::string>() == entry.first;
  });
  if (found == maps.end()) {
    return f.Error(absl::StrCat("feature_map ", JsonForMessage(map),
                                " is not supported, expected one of swish, relu, t2r"));
  }
  c.feature_map = found->second;
  SLOTSERVE_ASSIGN_OR_RETURN(const double normalizer, f.Number("gate_logit_normalizer"));
  if (normalizer == 0) return f.Error("gate_logit_normalizer must not be 0");
  c.gate_logit_normalizer = static_cast<float>(normalizer);
  SLOTSERVE_ASSIGN_OR_RETURN(c.norm_first, f.Flag("norm_first"));
  SLOTSERVE_ASSIGN_OR_RETURN(const bool rope, f.Flag("use_rope"));
  if (rope)
    return f.Error("use_rope true is not supported for gsa (fla's GSA layer has no rotary)");
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

absl::StatusOr<FlaConfig> Resolve(FlaModelType type, const json& values,
                                  const std::string& source) {
  const FieldReader f(values, source);
  FlaConfig c;
  c.model_type = type;
  if (!f.IsNull("attn")) {
    return f.Error("attn (hybrid softmax-attention layers) is not supported, expected null");
  }
  if (!f.IsNull("attnres_block_size")) {
    return f.Error(absl::StrCat(
        "attnres_block_size (attention residuals) is not supported, expected null, got ",
        JsonForMessage(f["attnres_block_size"])));
  }
  if (f["hidden_act"] != "swish") {
    return f.Error(absl::StrCat("hidden_act ", JsonForMessage(f["hidden_act"]),
                                " is not supported, expected \"swish\" (the SwiGLU MLP)"));
  }
  SLOTSERVE_RETURN_IF_ERROR(ResolveDimensions(f, c));
  const json& affine = f["elementwise_affine"];
  if (!affine.is_null() && !affine.is_boolean()) {
    return f.Error(absl::StrCat("elementwise_affine must be true, false or null, got ",
                                JsonForMessage(affine)));
  }
  c.elementwise_affine = affine.is_boolean() && affine.get<bool>();  // fla: `if affine:`
  SLOTSERVE_ASSIGN_OR_RETURN(c.use_short_conv, f.Flag("use_short_conv"));
  SLOTSERVE_ASSIGN_OR_RETURN(c.conv_size, f.PositiveInt("conv_size", 64));
  SLOTSERVE_ASSIGN_OR_RETURN(c.tie_word_embeddings, f.Flag("tie_word_embeddings"));
  SLOTSERVE_ASSIGN_OR_RETURN(const double norm_eps, f.Number("norm_eps"));
  if (norm_eps <= 0) return f.Error(absl::StrCat("norm_eps must be > 0, got ", norm_eps));
  c.norm_eps = static_cast<float>(norm_eps);
  if (c.is_gsa()) {
    SLOTSERVE_RETURN_IF_ERROR(ResolveGsa(f, c));
  } else {
    SLOTSERVE_ASSIGN_OR_RETURN(c.use_rope, f.Flag("use_rope"));
    // fla/modules/rotary.py rotates pairs (i, i + d/2).
    if (c.use_rope && c.head_k_dim() % 2 != 0) {
      return f.Error(
          absl::StrCat("use_rope needs an even head key dimension, got ", c.head_k_dim()));
    }
    SLOTSERVE_ASSIGN_OR_RETURN(c.clamp_min, f.NumberOrNull("clamp_min"));
    SLOTSERVE_ASSIGN_OR_RETURN(c.clamp_max, f.NumberOrNull("clamp_max"));
  }
  c.mlp_norm_eps = c.norm_first ? kLegacyMlpNormEps : c.norm_eps;
  SLOTSERVE_ASSIGN_OR_RETURN(c.bos_token_id, f.TokenId("bos_token_id", c.vocab_size));
  SLOTSERVE_ASSIGN_OR_RETURN(c.eos_token_id, f.TokenId("eos_token_id", c.vocab_size));
  if (!f.IsNull("max_position_embeddings")) {
    SLOTSERVE_ASSIGN_OR_RETURN(c.max_position_embeddings,
                               f.PositiveInt("max_position_embeddings", INT32_MAX));
  }
  return c;
}

}  // namespace

const char* FlaModelTypeName(FlaModelType type) {
  return type == FlaModelType::kAbc ? "abc" : "gsa";
}

const char* FlaFeatureMapName(FlaFeatureMap map) {
  switch (map) {
    case FlaFeatureMap::kSwish:
      return "swish";
    case FlaFeatureMap::kRelu:
      return "relu";
    case FlaFeatureMap::kT2r:
      return "t2r";
  }
  return "?";
}

std::string DescribeFlaAttention(const FlaConfig& c) {
  std::string text = absl::StrCat("fla ", FlaModelTypeName(c.model_type), ", ", c.num_slots,
                                  " slots, ", c.num_heads, " heads");
  if (c.num_kv_heads != c.num_heads) absl::StrAppend(&text, " over ", c.num_kv_heads, " kv heads");
  absl::StrAppend(&text, " (dk ", c.head_k_dim(), ", dv ", c.head_v_dim(), ")");
  if (c.is_gsa()) absl::StrAppend(&text, ", ", FlaFeatureMapName(c.feature_map), " feature map");
  if (c.use_rope) absl::StrAppend(&text, ", rope");
  if (c.use_short_conv) absl::StrAppend(&text, ", short conv ", c.conv_size);
  return text;
}

absl::StatusOr<FlaConfig> ParseFlaConfig(const std::string& json_text, const std::string& source) {
  SLOTSERVE_ASSIGN_OR_RETURN(json raw, ParseJsonDocument(json_text, source));
  if (!raw.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": must hold a JSON object"));
  }
  const auto type = raw.find("model_type");
  if (type == raw.end() || !type->is_string() ||
      (type->get<std::string>() != "abc" && type->get<std::string>() != "gsa")) {
    return absl::InvalidArgumentError(absl::StrCat(
        source,
        ": model_type must be one of abc, gsa (flash-linear-attention's ABC and GSA models), got ",
        type == raw.end() ? std::string("nothing") : JsonForMessage(*type)));
  }
  const FlaModelType model_type =
      type->get<std::string>() == "abc" ? FlaModelType::kAbc : FlaModelType::kGsa;
  json values = model_type == FlaModelType::kAbc ? AbcDefaults() : GsaDefaults();
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
    const char* name = FlaModelTypeName(model_type);
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": unsupported field(s) ", absl::StrJoin(unknown, ", "), " for model_type \"", name,
        "\" (not fields of fla's ", model_type == FlaModelType::kAbc ? "ABC" : "GSA",
        "Config this reader knows)"));
  }
  return Resolve(model_type, values, source);
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
