// gRPC's table for the engine's refusals: the engine checks every value once, where a request
// enters it (engine/request_validation.h, engine/source_validation.h), and names the field by
// its own name; most are the proto's already ("sampling.top_p"), the ids are not. A refusal of
// GenerateRequest is renamed here so that it names the proto field the client set:
// "prompt_ids[3] ..." is "token_ids.ids[3] ..." and "source_ids[1] ..." is
// "source.token_ids.ids[1] ..." when the client sent ids (ids encoded from text keep the
// engine's names, as no field of the request holds them).
#pragma once

#include "absl/status/status.h"
#include "slotserve/v1/slotserve.pb.h"

namespace slotserve::server {

// `status` with its message's leading engine field renamed to `request`'s proto field; the
// same status when it names none (or is OK).
absl::Status WithProtoFieldNames(const absl::Status& status, const v1::GenerateRequest& request);

}  // namespace slotserve::server
