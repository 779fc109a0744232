// The ids that end a request as eos (FinishReason::kEos). A Hugging Face directory can name
// several: config.json's eos_token_id (ModelConfig::eos_id), generation_config.json's
// eos_token_id (an int or a list) and the tokenizer's eos token. Every place a request stops on
// eos reads this one set: the stop check, ignore_eos, min_new_tokens' masking, beam search.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"

namespace slotserve::engine {

// The sorted, distinct union of `model_eos_id` and `tokenizer_eos_id` (each left out when < 0)
// and `extra_eos_ids` (SchedulerOptions::extra_eos_ids). INVALID_ARGUMENT quoting the id when
// an extra id is outside [0, vocab_size): generation could never end on it.
absl::StatusOr<std::vector<int32_t>> EosIdSet(int32_t model_eos_id, int32_t tokenizer_eos_id,
                                              std::span<const int32_t> extra_eos_ids,
                                              int vocab_size);

}  // namespace slotserve::engine
