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
#include "models/shared_config_keys.h"

namespace slotserve::models {
namespace {

constexpr char kFormat[] = "slotserve-seq2seq";
constexpr int64_t kFormatVersion = 1;

// Bounds that keep the cross memory's size far from integer overflow, as for self-attention.
constexpr int64_t kMaxCrossMemory = 1 << 16;  // abc slots, rfa features, luna length, segment
constexpr int64_t kMaxSourceTokens = 1 << 24;

const std::vector<std::string>& CrossKindNames() {
  static const std::vector<std::string> names = {"softmax", "abc", "rfa", "luna", "srformer"};
  return names;
}

// The keys each cross kind takes besides "kind", in CrossAttentionKind order.
const std::vector<std::vector<std::string>>& CrossKindKeys() {
  static const std::vector<std::vector<std::string>> keys = {
      {},
      {"slots"},
      {"features", "feature_scale", "eps", "norm_eps", "layout"},
      {"length", "temperature", "filter"},
      {"segment", "target_length"}};
  return keys;
}

absl::Status ParseSourceFilter(const nlohmann::json& object, const std::string& source,
                               SourceFilterConfig& filter) {
  base::JsonFields fields(object, source, "cross_attention.filter.");
  SLOTSERVE_RETURN_IF_ERROR(fields.RefuseUnknownKeys({"op", "kernel", "stride"}));
  SLOTSERVE_ASSIGN_OR_RETURN(const int op, fields.Choice("op", {"conv", "maxpool"}));
  filter.maxpool = op == 1;
  SLOTSERVE_ASSIGN_OR_RETURN(filter.kernel, fields.Integer("kernel", 1, kMaxCrossMemory));
  SLOTSERVE_ASSIGN_OR_RETURN(filter.stride, fields.Integer("stride", 1, kMaxCrossMemory));
  return absl::OkStatus();
}

absl::Status ParseCrossAttention(const nlohmann::json& object, const std::string& source,
                                 CrossAttentionConfig& cross) {
  base::JsonFields fields(object, source, "cross_attention.");
  SLOTSERVE_ASSIGN_OR_RETURN(const int kind_index, fields.Choice("kind", CrossKindNames()));
  cross.kind = static_cast<CrossAttentionKind>(kind_index);
  std::vector<std::string> known_keys = {"kind"};
  const std::vector<std::string>& kind_keys = CrossKindKeys()[kind_index];
  known_keys.insert(known_keys.end(), kind_keys.begin(), kind_keys.end());
  SLOTSERVE_RETURN_IF_ERROR(fields.RefuseUnknownKeys(
      known_keys,
      absl::StrCat(" for cross_attention.kind \"", CrossKindNames()[kind_index], "\"")));
  switch (cross.kind) {
    case CrossAttentionKind::kSoftmax:
      break;
    case CrossAttentionKind::kAbc: {
      SLOTSERVE_ASSIGN_OR_RETURN(cross.memory_rows, fields.Integer("slots", 1, kMaxCrossMemory));
      break;
    }
    case CrossAttentionKind::kRfa: {
      SLOTSERVE_ASSIGN_OR_RETURN(cross.features, fields.Integer("features", 1, kMaxCrossMemory));
      AttentionConfig features;
      SLOTSERVE_RETURN_IF_ERROR(ParseRandomFeatureOptions(fields, features));
      cross.feature_scale = features.feature_scale;
      cross.eps = features.eps;
      cross.norm_eps = features.norm_eps;
      cross.interleave = features.interleave;
      break;
    }
    case CrossAttentionKind::kLuna: {
      SLOTSERVE_ASSIGN_OR_RETURN(cross.length, fields.Integer("length", 1, kMaxCrossMemory));
      SLOTSERVE_ASSIGN_OR_RETURN(const double temperature, fields.Number("temperature"));
      if (static_cast<float>(temperature) <= 0) {
        return fields.Error("temperature", absl::StrCat("must be > 0, got ", temperature));
      }
      cross.temperature = static_cast<float>(temperature);
      SLOTSERVE_ASSIGN_OR_RETURN(const nlohmann::json* filter, fields.ObjectOrNull("filter"));
      cross.has_filter = filter != nullptr;
      if (filter != nullptr)
        SLOTSERVE_RETURN_IF_ERROR(ParseSourceFilter(*filter, source, cross.filter));
      break;
    }
    case CrossAttentionKind::kSrformer: {
      SLOTSERVE_ASSIGN_OR_RETURN(cross.segment, fields.Integer("segment", 1, kMaxCrossMemory));
      SLOTSERVE_ASSIGN_OR_RETURN(cross.target_length,
                                 fields.Integer("target_length", 1, kMaxSourceTokens));
      break;
    }
  }
  return absl::OkStatus();
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

const char* CrossAttentionKindName(CrossAttentionKind kind) {
  return CrossKindNames()[static_cast<int>(kind)].c_str();
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
