// The encoder-decoder flags of slotserve-cli (docs/ARCHITECTURE.md "Encoder–decoder models"):
// --source TEXT or --source-ids 1,2,3 (what `translate` translates; `generate` takes them too;
// --beam is request_flags.h's). Also the seq2seq lines of `info`.
#pragma once

#include <cstdio>

#include "absl/status/status.h"
#include "slotserve/v1/slotserve.pb.h"

namespace slotserve::clients {

// Whether --source or --source-ids was given.
bool SourceGiven();
// Sets request->source from the flags (left unset when not given).
// INVALID_ARGUMENT for both --source and --source-ids, or an id that is not an integer.
absl::Status AddSource(v1::GenerateRequest* request);
// For a seq2seq model: the cross attention, source limit, start id and the state's two parts.
void PrintSeq2seqInfo(const v1::ModelInfo& info, std::FILE* out);

}  // namespace slotserve::clients
