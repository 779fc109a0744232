// Prompt text -> token ids, shared by the front ends (gRPC's text prompts and Tokenize, the
// HTTP API's prompts and chat messages), so that the same text gives the same ids whichever
// way it came in.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/tokenizer.h"

namespace slotserve::server {

// INVALID_ARGUMENT naming `field` unless `text` is valid UTF-8.
absl::Status CheckUtf8(const std::string& text, absl::string_view field);

// Text -> ids: UTF-8 checked, named `field`, BOS prepended when `bos_id` >= 0.
// FAILED_PRECONDITION when `tokenizer` is null (the model directory has no tokenizer.model).
absl::StatusOr<std::vector<int32_t>> EncodeText(const std::string& text, absl::string_view field,
                                                const engine::Tokenizer* tokenizer, int bos_id);

}  // namespace slotserve::server
