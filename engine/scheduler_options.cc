// SchedulerOptions::Validate (scheduler.h): every bound the scheduler is built with, checked
// before anything is allocated.
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/scheduler.h"

namespace slotserve::engine {
namespace {

absl::Status Positive(const char* field, int value) {
  if (value > 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, " must be > 0, got ", value));
}

}  // namespace

absl::Status SchedulerOptions::Validate() const {
  for (const auto& [field, value] :
       {std::pair{"max_slots", max_slots}, std::pair{"max_queued", max_queued},
        std::pair{"token_budget", token_budget}, std::pair{"prefill_chunk", prefill_chunk},
        std::pair{"default_max_new_tokens", default_max_new_tokens},
        std::pair{"max_new_tokens_limit", max_new_tokens_limit},
        std::pair{"max_prompt_tokens", max_prompt_tokens},
        std::pair{"max_stop_sequence_bytes", max_stop_sequence_bytes}, std::pair{"max_n", max_n},
        std::pair{"max_beam_width", max_beam_width}}) {
    SLOTSERVE_RETURN_IF_ERROR(Positive(field, value));
  }
  if (max_cross_memories < 0 || max_cross_memories > max_slots) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_cross_memories must be in [0, max_slots = ", max_slots,
                     "] (0 = one per slot), got ", max_cross_memories));
  }
  if (default_max_new_tokens > max_new_tokens_limit) {
    return absl::InvalidArgumentError(
        absl::StrCat("default_max_new_tokens must be <= max_new_tokens_limit (",
                     max_new_tokens_limit, "), got ", default_max_new_tokens));
  }
  if (prefix_block < 0 || prefix_cache_bytes < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("prefix_block and prefix_cache_bytes must be >= 0 (0 = off), got ",
                     prefix_block, " and ", prefix_cache_bytes));
  }
  if (max_context_tokens < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_context_tokens must be >= 0 (0 = the model's), got ", max_context_tokens));
  }
  if (max_stop_sequences < 0 || max_top_logprobs < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_stop_sequences and max_top_logprobs must be >= 0, got ",
                     max_stop_sequences, " and ", max_top_logprobs));
  }
  return absl::OkStatus();
}

}  // namespace slotserve::engine
