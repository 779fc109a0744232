// GenerateRequest.source (docs/ARCHITECTURE.md "Encoder–decoder models") ->
// engine::GenerationRequest::source_ids. A text source is tokenised without BOS and ends with the
// model's eos id; token ids are used as given: the engine checks them and max_source_tokens
// (source_validation.h), and its refusal names the field the client set ("source.token_ids.ids[1]",
// proto_field_names.h). ParseGenerateRequest handles the prompt beside a source (optional, no BOS).
#pragma once

#include "absl/status/status.h"
#include "engine/generation_request.h"
#include "engine/tokenizer.h"
#include "slotserve/v1/slotserve.pb.h"

namespace slotserve::server {

// Does nothing when `request` has no source. `eos_id` < 0: nothing is appended. Errors:
// INVALID_ARGUMENT for a source with neither text nor ids, empty text or empty ids, text that
// is not UTF-8; FAILED_PRECONDITION for text without a tokenizer.
absl::Status ParseSource(const v1::GenerateRequest& request, const engine::Tokenizer* tokenizer,
                         int eos_id, engine::GenerationRequest* parsed);

}  // namespace slotserve::server
