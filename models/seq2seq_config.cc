#include "models/seq2seq_config.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/json_document.h"
#include "base/json_fields.h"
#include "base/status_macros.h"
#include "models/attention_kind.h"
#include "models/cross_attention_kind.h"
#include "models/shared_config_keys.h"

namespace slotserve::models {
namespace {

constexpr char kFormat[] = "slotserve-seq2seq";
constexpr int64_t kFormatVersion = 1;

// The kinds' names, in CrossAttentionKind order: cross_attention.kind's choices.
std::vector<std::string> CrossKindNames() {
  std::vector<std::string> names;
  for (const CrossAttentionKindDescription& kind : CrossAttentionKinds())
    names.push_back(kind.name);
  return names;
}

absl::Status ParseCrossAttention(const nlohmann::json& object, const std::string& source,
                                 CrossAttentionConfig& cross) {
  base::JsonFields fields(object, source, "cross_attention.");
  SLOTSERVE_ASSIGN_OR_RETURN(const int kind_index, fields.Choice("kind", CrossKindNames()));
  const CrossAttentionKindDescription& kind = CrossAttentionKinds()[kind_index];
  cross.kind = kind.kind;
  std::vector<std::string> known_keys = {"kind"};
  known_keys.insert(known_keys.end(), kind.option_keys.begin(), kind.option_keys.end());
  SLOTSERVE_RETURN_IF_ERROR(fields.RefuseUnknownKeys(
      known_keys, absl::StrCat(" for cross_attention.kind \"", kind.name, "\"")));
  if (kind.parse_options == nullptr) return absl::OkStatus();
  return kind.parse_options(fields, source, cross);
}

absl::StatusOr<Seq2seqConfig> ParseSeq2seqObject(const nlohmann::json& document,
                                                 const std::string& source) {
  SLOTSERVE_RETURN_IF_ERROR(RequireJsonObject(document, source));
  base::JsonFields fields(document, source, "");
  std::vector<std::string> known_keys = SharedTopLevelKeys();
  known_keys.insert(known_keys.end(), {"format", "format_version", "decoder_start_id", "encoder",
                                       "decoder", "cross_attention"});
  SLOTSERVE_RETURN_IF_ERROR(fields.RefuseUnknownKeys(known_keys));
  SLOTSERVE_RETURN_IF_ERROR(ParseFormatKeys(fields, kFormat, kFormatVersion));

  Seq2seqConfig config;
  SLOTSERVE_RETURN_IF_ERROR(ParseSharedTopLevelKeys(fields, config.decoder));
  SLOTSERVE_ASSIGN_OR_RETURN(config.decoder_start_id,
                             fields.Integer("decoder_start_id", 0, config.decoder.vocab_size - 1));

  SLOTSERVE_ASSIGN_OR_RETURN(const nlohmann::json* encoder, fields.Object("encoder"));
  base::JsonFields encoder_fields(*encoder, source, "encoder.");
  SLOTSERVE_RETURN_IF_ERROR(encoder_fields.RefuseUnknownKeys({"n_layers", "max_source_tokens"}));
  SLOTSERVE_ASSIGN_OR_RETURN(config.encoder_layers,
                             encoder_fields.Integer("n_layers", 1, kMaxLayers));
  SLOTSERVE_ASSIGN_OR_RETURN(config.max_source_tokens,
                             encoder_fields.Integer("max_source_tokens", 1, kMaxSourceTokens));

  SLOTSERVE_ASSIGN_OR_RETURN(const nlohmann::json* decoder, fields.Object("decoder"));
  base::JsonFields decoder_fields(*decoder, source, "decoder.");
  SLOTSERVE_RETURN_IF_ERROR(decoder_fields.RefuseUnknownKeys({"n_layers", "attention"}));
  SLOTSERVE_ASSIGN_OR_RETURN(config.decoder.n_layers,
                             decoder_fields.Integer("n_layers", 1, kMaxLayers));
  SLOTSERVE_ASSIGN_OR_RETURN(const nlohmann::json* attention, decoder_fields.Object("attention"));
  SLOTSERVE_RETURN_IF_ERROR(
      ParseAttentionObject(*attention, source, "decoder.attention.", config.decoder.attention));

  SLOTSERVE_ASSIGN_OR_RETURN(const nlohmann::json* cross, fields.Object("cross_attention"));
  SLOTSERVE_RETURN_IF_ERROR(ParseCrossAttention(*cross, source, config.cross));
  return config;
}

}  // namespace

ModelConfig Seq2seqConfig::EncoderView() const {
  ModelConfig encoder = decoder;
  encoder.n_layers = encoder_layers;
  encoder.attention = AttentionConfig{};
  encoder.attention.kind = AttentionKind::kSoftmax;
  encoder.attention.max_context = max_source_tokens;
  return encoder;
}

absl::StatusOr<Seq2seqConfig> ParseSeq2seqConfig(const std::string& json_text,
                                                 const std::string& source) {
  SLOTSERVE_ASSIGN_OR_RETURN(const nlohmann::json document,
                             base::ParseJsonDocument(json_text, source));
  return ParseSeq2seqObject(document, source);
}

absl::StatusOr<Seq2seqConfig> LoadSeq2seqConfig(const std::filesystem::path& path) {
  SLOTSERVE_ASSIGN_OR_RETURN(const std::string text, ReadConfigFile(path));
  return ParseSeq2seqConfig(text, path.string());
}

}  // namespace slotserve::models
