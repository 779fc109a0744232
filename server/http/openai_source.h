// The HTTP API's extension for encoder-decoder models (docs/ARCHITECTURE.md "Encoder–decoder
// models"), in the way vLLM takes extra body parameters: /v1/completions accepts "source" (a
// string, or an array of token ids) — what to translate — and "prompt" becomes an optional target
// prefix (text without BOS). A seq2seq model needs a source; a decoder-only model refuses one; chat
// is for decoder-only models. The engine judges lengths and ids (source_validation.h) and
// openai_errors.h names its messages' field "source".
#pragma once

#include "absl/status/status.h"
#include "engine/generation_request.h"
#include "server/http/json_params.h"
#include "server/http/served_model.h"

namespace slotserve::server::http {

// Reads "source" into generation->source_ids (a string: tokenised, then eos).
absl::Status ReadSource(JsonParams& params, const ServedModel& model,
                        engine::GenerationRequest* generation);

// /v1/chat/completions on an encoder-decoder model: a 400 saying to use /v1/completions.
absl::Status RefuseChatForSeq2seq(const ServedModel& model);

}  // namespace slotserve::server::http
