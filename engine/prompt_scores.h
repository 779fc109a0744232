// Scoring a prompt (LogprobOptions::prompt, e.g. the HTTP API's `echo` with `logprobs`): the
// log probability of every prompt token after the first, read from the logits of the row
// before it. The step runner prefills such a prompt asking for every row's logits and hands
// them here chunk by chunk; the scores go out once, in choice 0's first TokenChunk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "engine/generation_events.h"

namespace slotserve::engine {

class PromptScores {
 public:
  // `logits` holds rows for prompt positions first, first + 1, ... (vocab floats each); row j
  // scores prompt[first + j + 1], which must exist. Rows arrive in prompt order, none twice.
  void AddRows(std::span<const float> logits, size_t vocab, std::span<const int32_t> prompt,
               size_t first, int top_n);
  // Every scorable token of a prompt of `prompt_size` tokens, once: nullopt before they are
  // all scored and after the first call that returned them.
  std::optional<std::vector<GeneratedTokenLogprobs>> TakeWhenComplete(size_t prompt_size);

 private:
  std::vector<GeneratedTokenLogprobs> scores_;
  bool taken_ = false;
};

}  // namespace slotserve::engine
