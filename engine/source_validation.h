// The rules a request's source (GenerationRequest::source_ids, docs/ARCHITECTURE.md
// "Encoder–decoder models") must follow, run by ValidateGenerationRequest before its other checks.
// Each error is INVALID_ARGUMENT and quotes what was sent:
//   - a seq2seq model needs a source on a new request; a session's continuation must not send
//     one (its kept state already holds the source's cross memory);
//   - a decoder-only model refuses any source;
//   - a source is 1 ... max_source_tokens ids, each in [0, vocab_size);
//   - the decoder input, [decoder_start_id] + prompt, fits the model's context.
// For a seq2seq model an empty prompt (no target prefix) is allowed.
#pragma once

#include "absl/status/status.h"
#include "engine/generation_request.h"

namespace slotserve::engine {

struct RequestLimits;

absl::Status ValidateSource(const GenerationRequest& request, const RequestLimits& limits);

// Whether the prompt may be empty: a seq2seq request with a source (the decoder still gets
// decoder_start_id).
bool EmptyPromptAllowed(const GenerationRequest& request, const RequestLimits& limits);

}  // namespace slotserve::engine
