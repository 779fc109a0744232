#include "models/model_config.h"

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "models/json_document.h"
#include "models/json_fields.h"

namespace slotserve::models {
namespace {

// Upper bounds that keep every derived size (weights, state, scratch) far from integer
// overflow; real models of this family are orders of magnitude smaller.
constexpr int64_t kMaxVocab = 1 << 22;
constexpr int64_t kMaxWidth = 1 << 16;  // d_model, d_ffn
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxAttentionSize = 1 << 16;  // abc memory rows, features, length
constexpr int64_t kMaxContext = 1 << 24;
constexpr int64_t kMaxPositionOffset = 1 << 24;

constexpr char kFormat[] = "slotserve-lm";
constexpr int64_t kFormatVersion = 1;

absl::Status ParseAttention(const nlohmann::json& object, const std::string& source,
                            AttentionConfig& attention) {
  JsonFields fields(object, source, "attention.");
  SLOTSERVE_ASSIGN_OR_RETURN(const int kind,
                             fields.Choice("kind", {"abc", "rfa", "luna", "softmax"}));
  attention.kind = static_cast<AttentionKind>(kind);
  const std::string context =
      absl::StrCat(" for attention.kind \"", AttentionKindName(attention.kind), "\"");
  switch (attention.kind) {
    case AttentionKind::kAbc: {
      SLOTSERVE_RETURN_IF_ERROR(fields.RefuseUnknownKeys({"kind", "slots"}, context));
      SLOTSERVE_ASSIGN_OR_RETURN(attention.memory_rows,
                                 fields.Integer("slots", 1, kMaxAttentionSize));
      break;
    }
    case AttentionKind::kRfa: {
      SLOTSERVE_RETURN_IF_ERROR(fields.RefuseUnknownKeys(
          {"kind", "features", "gate", "feature_scale", "eps", "norm_eps", "layout"}, context));
      SLOTSERVE_ASSIGN_OR_RETURN(attention.features,
                                 fields.Integer("features", 1, kMaxAttentionSize));
      SLOTSERVE_ASSIGN_OR_RETURN(attention.gate, fields.Bool("gate"));
      SLOTSERVE_ASSIGN_OR_RETURN(const double feature_scale, fields.Number("feature_scale"));
      if (static_cast<float>(feature_scale) == 0)
        return fields.Error("feature_scale", "must not be 0");
      SLOTSERVE_ASSIGN_OR_RETURN(const double eps, fields.Number("eps"));
      if (static_cast<float>(eps) <= 0)
        return fields.Error("eps", absl::StrCat("must be > 0, got ", eps));
      SLOTSERVE_ASSIGN_OR_RETURN(const double norm_eps, fields.Number("norm_eps"));
      if (static_cast<float>(norm_eps) <= 0) {
        return fields.Error("norm_eps", absl::StrCat("must be > 0, got ", norm_eps));
      }
      SLOTSERVE_ASSIGN_OR_RETURN(const int layout,
                                 fields.Choice("layout", {"concat", "interleave"}));
      attention.feature_scale = static_cast<float>(feature_scale);
      attention.eps = static_cast<float>(eps);
      attention.norm_eps = static_cast<float>(norm_eps);
      attention.interleave = layout == 1;
      break;
    }
    case AttentionKind::kLuna: {
      SLOTSERVE_RETURN_IF_ERROR(
          fields.RefuseUnknownKeys({"kind", "length", "activation", "tie_kv"}, context));
      SLOTSERVE_ASSIGN_OR_RETURN(attention.length, fields.Integer("length", 1, kMaxAttentionSize));
      SLOTSERVE_ASSIGN_OR_RETURN(const int activation,
                                 fields.Choice("activation", {"softplus", "elu1"}));
      attention.elu1 = activation == 1;
      SLOTSERVE_ASSIGN_OR_RETURN(attention.tie_kv, fields.Bool("tie_kv"));
      break;
    }
    case AttentionKind::kSoftmax: {
      SLOTSERVE_RETURN_IF_ERROR(fields.RefuseUnknownKeys({"kind", "max_context"}, context));
      SLOTSERVE_ASSIGN_OR_RETURN(attention.max_context,
                                 fields.Integer("max_context", 1, kMaxContext));
      break;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ModelConfig> ParseConfigObject(const nlohmann::json& document,
                                              const std::string& source) {
  if (!document.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": must hold one JSON object, got ", JsonForMessage(document)));
  }
  JsonFields fields(document, source, "");
  SLOTSERVE_RETURN_IF_ERROR(fields.RefuseUnknownKeys(
      {"format", "format_version", "vocab_size", "d_model", "n_layers", "n_heads", "d_ffn",
       "activation", "norm_eps", "position", "position_offset", "tie_embeddings", "embed_scale",
       "bos_id", "eos_id", "attention"}));

  SLOTSERVE_ASSIGN_OR_RETURN(const std::string format, fields.String("format"));
  if (format != kFormat) {
    return fields.Error("format", absl::StrCat("must be \"", kFormat, "\", got \"", format, "\""));
  }
  SLOTSERVE_ASSIGN_OR_RETURN(const int64_t version,
                             fields.Integer("format_version", INT64_MIN, INT64_MAX));
  if (version != kFormatVersion) {
    return fields.Error("format_version", absl::StrCat("must be ", kFormatVersion,
                                                       " (the only "
                                                       "version this build reads), got ",
                                                       version));
  }

  ModelConfig config;
  SLOTSERVE_ASSIGN_OR_RETURN(config.vocab_size, fields.Integer("vocab_size", 1, kMaxVocab));
  SLOTSERVE_ASSIGN_OR_RETURN(config.d_model, fields.Integer("d_model", 1, kMaxWidth));
  SLOTSERVE_ASSIGN_OR_RETURN(config.n_layers, fields.Integer("n_layers", 1, kMaxLayers));
  SLOTSERVE_ASSIGN_OR_RETURN(config.n_heads, fields.Integer("n_heads", 1, kMaxWidth));
  if (config.d_model % config.n_heads != 0) {
    return fields.Error("d_model", absl::StrCat("must be a multiple of n_heads ", config.n_heads,
                                                ", got ", config.d_model));
  }
  SLOTSERVE_ASSIGN_OR_RETURN(config.d_ffn, fields.Integer("d_ffn", 1, kMaxWidth));
  SLOTSERVE_ASSIGN_OR_RETURN(const int activation, fields.Choice("activation", {"gelu", "relu"}));
  config.gelu = activation == 0;
  SLOTSERVE_ASSIGN_OR_RETURN(const double norm_eps, fields.Number("norm_eps"));
  if (static_cast<float>(norm_eps) <= 0)
    return fields.Error("norm_eps", absl::StrCat("must be > 0, got ", norm_eps));
  config.norm_eps = static_cast<float>(norm_eps);
  SLOTSERVE_ASSIGN_OR_RETURN(const int position, fields.Choice("position", {"sinusoidal", "none"}));
  config.sinusoidal_positions = position == 0;
  // fairseq's frequencies divide by (d_model/2 - 1) and pair sines with cosines.
  if (config.sinusoidal_positions && (config.d_model % 2 != 0 || config.d_model < 4)) {
    return fields.Error("d_model", absl::StrCat("must be even and >= 4 with \"position\": "
                                                "\"sinusoidal\", got ",
                                                config.d_model));
  }
  SLOTSERVE_ASSIGN_OR_RETURN(config.position_offset,
                             fields.Integer("position_offset", 0, kMaxPositionOffset));
  SLOTSERVE_ASSIGN_OR_RETURN(config.tie_embeddings, fields.Bool("tie_embeddings"));
  SLOTSERVE_ASSIGN_OR_RETURN(const double embed_scale, fields.Number("embed_scale"));
  config.embed_scale = static_cast<float>(embed_scale);
  const int64_t last_token = config.vocab_size - 1;
  SLOTSERVE_ASSIGN_OR_RETURN(config.bos_id, fields.Integer("bos_id", 0, last_token));
  SLOTSERVE_ASSIGN_OR_RETURN(config.eos_id, fields.Integer("eos_id", 0, last_token));
  SLOTSERVE_ASSIGN_OR_RETURN(const nlohmann::json* attention, fields.Object("attention"));
  SLOTSERVE_RETURN_IF_ERROR(ParseAttention(*attention, source, config.attention));
  return config;
}

}  // namespace

const char* AttentionKindName(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::kAbc:
      return "abc";
    case AttentionKind::kRfa:
      return "rfa";
    case AttentionKind::kLuna:
      return "luna";
    case AttentionKind::kSoftmax:
      return "softmax";
  }
  return "unknown";
}

absl::StatusOr<ModelConfig> ParseModelConfig(const std::string& json_text,
                                             const std::string& source) {
  SLOTSERVE_ASSIGN_OR_RETURN(const nlohmann::json document, ParseJsonDocument(json_text, source));
  return ParseConfigObject(document, source);
}

absl::StatusOr<ModelConfig> LoadModelConfig(const std::filesystem::path& path) {
  const std::string source = path.string();
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    return absl::NotFoundError(absl::StrCat(source, ": no such file"));
  }
  // A config is a few hundred bytes; anything this large is not one.
  constexpr uintmax_t kMaxConfigBytes = 1 << 20;
  const uintmax_t size = std::filesystem::file_size(path, error);
  if (!error && size > kMaxConfigBytes) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", size,
                                                   " bytes is too large for "
                                                   "a config file (at most ",
                                                   kMaxConfigBytes, ")"));
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat(source, ": cannot be opened for reading"));
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) return absl::DataLossError(absl::StrCat(source, ": read failed"));
  return ParseModelConfig(text.str(), source);
}

}  // namespace slotserve::models
