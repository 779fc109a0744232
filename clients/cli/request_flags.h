// The sampling, stopping and logprob flags of `slotserve-cli generate|complete`, turned into a
// slotserve.v1.GenerateRequest. Flags left unset are left unset in the request, so the
// server's defaults apply.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "slotserve/v1/slotserve.pb.h"

namespace slotserve::clients {

// `prompt` is the text (or, with --token-ids, ignored and may be empty).
absl::StatusOr<v1::GenerateRequest> BuildGenerateRequest(const std::string& prompt);

// Whether --token-ids gave the prompt (then no positional prompt is needed).
bool PromptGivenAsTokenIds();

}  // namespace slotserve::clients
