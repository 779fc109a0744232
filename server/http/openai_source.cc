#include "server/http/openai_source.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "server/http/openai_errors.h"
#include "server/prompt_encoding.h"

namespace slotserve::server::http {
namespace {

absl::Status SourceError(absl::string_view code, absl::string_view message) {
  return ParamError("source", code, message);
}

}  // namespace

absl::Status ReadSource(JsonParams& params, const ServedModel& model,
                        engine::GenerationRequest* generation) {
  const nlohmann::json* source = params.Get("source");
  if (source == nullptr) {
    if (!model.seq2seq) return absl::OkStatus();
    return SourceError("invalid_value",
                       "source is required: this server serves an encoder-decoder model; send "
                       "\"source\" (a string or an array of token ids) to translate, and "
                       "\"prompt\" as an optional target prefix");
  }
  if (!model.seq2seq) {
    return SourceError("unsupported_value",
                       "source: a seq2seq source needs an encoder-decoder model; this server "
                       "serves a decoder-only language model");
  }
  if (source->is_string()) {
    const std::string& text = source->get_ref<const std::string&>();
    if (text.empty()) return SourceError("invalid_value", "source must not be empty");
    SLOTSERVE_ASSIGN_OR_RETURN(generation->source_ids,
                               EncodeText(text, "source", model.tokenizer, /*bos_id=*/-1));
    if (model.eos_id >= 0) generation->source_ids.push_back(model.eos_id);
    return absl::OkStatus();
  }
  if (source->is_array()) {
    if (source->empty()) return SourceError("invalid_value", "source must not be empty");
    return ReadInt32Array(*source, "source", &generation->source_ids);
  }
  return params.TypeError("source", "a string or an array of token ids", *source);
}

absl::Status RefuseChatForSeq2seq(const ServedModel& model) {
  if (!model.seq2seq) return absl::OkStatus();
  return ParamError("messages", "unsupported_value",
                    "chat needs a decoder-only model; this server serves an encoder-decoder "
                    "model: POST /v1/completions with \"source\" instead");
}

}  // namespace slotserve::server::http
