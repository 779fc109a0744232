#include "models/shared_config_keys.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "base/json_document.h"
#include "base/status_macros.h"
#include "models/attention_kind.h"

namespace slotserve::models {

std::vector<std::string> SharedTopLevelKeys() {
  return {"vocab_size",     "d_model",     "n_heads",  "d_ffn",
          "activation",     "norm_eps",    "position", "position_offset",
          "tie_embeddings", "embed_scale", "bos_id",   "eos_id"};
}

absl::Status RequireJsonObject(const nlohmann::json& document, const std::string& source) {
  if (document.is_object()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(source, ": must hold one JSON object, got ", base::JsonForMessage(document)));
}

absl::Status ParseFormatKeys(base::JsonFields& fields, std::string_view format, int64_t version) {
  SLOTSERVE_ASSIGN_OR_RETURN(const std::string found, fields.String("format"));
  if (found != format) {
    return fields.Error("format",
                        absl::StrCat("must be \"", std::string(format), "\", got \"", found, "\""));
  }
  SLOTSERVE_ASSIGN_OR_RETURN(const int64_t found_version,
                             fields.Integer("format_version", INT64_MIN, INT64_MAX));
  if (found_version != version) {
    return fields.Error("format_version", absl::StrCat("must be ", version,
                                                       " (the only "
                                                       "version this build reads), got ",
                                                       found_version));
  }
  return absl::OkStatus();
}

absl::Status ParseSharedTopLevelKeys(base::JsonFields& fields, ModelConfig& config) {
  SLOTSERVE_ASSIGN_OR_RETURN(config.vocab_size, fields.Integer("vocab_size", 1, kMaxVocab));
  SLOTSERVE_ASSIGN_OR_RETURN(config.d_model, fields.Integer("d_model", 1, kMaxWidth));
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
  return absl::OkStatus();
}

// The attention object, as its kind's description says: the kind, then no key the kind does
// not know, its memory size, and its options.
absl::Status ParseAttentionObject(const nlohmann::json& object, const std::string& source,
                                  const std::string& path_prefix, AttentionConfig& attention) {
  base::JsonFields fields(object, source, path_prefix);
  std::vector<std::string> kind_names;
  for (const AttentionKindDescription& kind : AttentionKinds()) kind_names.push_back(kind.name);
  SLOTSERVE_ASSIGN_OR_RETURN(const int kind_index, fields.Choice("kind", kind_names));
  const AttentionKindDescription& kind = AttentionKinds()[kind_index];
  attention.kind = kind.kind;
  std::vector<std::string> known_keys = {"kind", kind.memory_size_key};
  known_keys.insert(known_keys.end(), kind.option_keys.begin(), kind.option_keys.end());
  SLOTSERVE_RETURN_IF_ERROR(fields.RefuseUnknownKeys(
      known_keys, absl::StrCat(" for ", path_prefix, "kind \"", kind.name, "\"")));
  SLOTSERVE_ASSIGN_OR_RETURN(attention.*kind.memory_size,
                             fields.Integer(kind.memory_size_key, 1, kind.max_memory_size));
  if (kind.parse_options != nullptr)
    SLOTSERVE_RETURN_IF_ERROR(kind.parse_options(fields, attention));
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadConfigFile(const std::filesystem::path& path) {
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
  return text.str();
}

absl::StatusOr<std::string> ReadConfigFormat(const std::filesystem::path& path) {
  SLOTSERVE_ASSIGN_OR_RETURN(const std::string text, ReadConfigFile(path));
  SLOTSERVE_ASSIGN_OR_RETURN(const nlohmann::json document,
                             base::ParseJsonDocument(text, path.string()));
  if (!document.is_object()) return std::string();
  const auto format = document.find("format");
  if (format == document.end() || !format->is_string()) return std::string();
  return format->get<std::string>();
}

}  // namespace slotserve::models
