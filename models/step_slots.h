// What every model's decode step checks about its slots before running anything: each inside
// the arena, none twice, each below the model's longest context. One flag per arena slot, all
// false between steps, so the distinct-slots check allocates nothing per step (it runs for
// every generated token).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "models/state_arena.h"

namespace slotserve::models {

class StepSlotCheck {
 public:
  // INVALID_ARGUMENT naming `call`, the slot and its index when a slot is outside the arena,
  // repeated, or at `max_positions` already.
  absl::Status Check(const StateArena& states, std::span<const int32_t> slots,
                     int64_t max_positions, const char* call);

 private:
  std::vector<bool> in_step_;
};

// Splits a prompt into passes of at most `max_rows` tokens and calls
// pass(first, rows, every_logit, last_logit, pass_logits) for each: every pass gets its rows'
// logits when `every_logit` ([tokens, vocab] `logits`), and only the last pass asks for the last
// token's logits otherwise (`logits` [vocab], or empty when they stay on the device).
template <typename Pass>
absl::Status ForEachPrefillPass(size_t tokens, size_t max_rows, bool every_logit, int64_t vocab,
                                std::span<float> logits, Pass&& pass) {
  for (size_t first = 0; first < tokens; first += max_rows) {
    const size_t rows = std::min(max_rows, tokens - first);
    const bool last_pass = first + rows == tokens;
    const std::span<float> pass_logits =
        every_logit ? logits.subspan(first * vocab, rows * vocab) : logits;
    if (absl::Status status =
            pass(first, rows, every_logit, !every_logit && last_pass, pass_logits);
        !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace slotserve::models
