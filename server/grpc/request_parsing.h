// The edge between the wire and the engine: a slotserve.v1.GenerateRequest becomes an
// engine::GenerationRequest here (docs/ARCHITECTURE.md "Floors"). Only what the proto shape itself
// decides is checked here (a prompt is present, text is UTF-8 and not empty); every value is the
// engine's to check (Scheduler::Submit), once, so the front ends never disagree; its refusals
// are renamed to the proto's fields (proto_field_names.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "engine/generation_request.h"
#include "engine/sampling_defaults.h"
#include "engine/tokenizer.h"
#include "server/prompt_encoding.h"
#include "slotserve/v1/slotserve.pb.h"

namespace slotserve::server {

// `tokenizer` may be null (then text prompts are refused with FAILED_PRECONDITION). `bos_id`
// (< 0: none) is prepended to text prompts; token ids pass as given. Errors are
// INVALID_ARGUMENT naming the proto field ("text must not be empty").
// Which sampling fields the request set: temperature, top_p and repetition_penalty by their
// presence, top_k and min_p (plain proto3 fields) when not 0.
engine::SampledFieldsSet SampledFieldsOf(const v1::SamplingParams& proto);

absl::StatusOr<engine::GenerationRequest> ParseGenerateRequest(const v1::GenerateRequest& request,
                                                               const engine::Tokenizer* tokenizer,
                                                               int bos_id, absl::Time deadline);

}  // namespace slotserve::server
