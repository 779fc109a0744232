#include "engine/prompt_scores.h"

#include <utility>

#include "engine/token_logprobs.h"

namespace slotserve::engine {

void PromptScores::AddRows(std::span<const float> logits, size_t vocab,
                           std::span<const int32_t> prompt, size_t first, int top_n) {
  const size_t rows = logits.size() / vocab;
  for (size_t j = 0; j < rows; ++j) {
    scores_.push_back(
        ComputeLogprobs(logits.subspan(j * vocab, vocab), prompt[first + j + 1], top_n));
  }
}

std::optional<std::vector<GeneratedTokenLogprobs>> PromptScores::TakeWhenComplete(
    size_t prompt_size) {
  if (taken_ || scores_.size() + 1 < prompt_size) return std::nullopt;
  taken_ = true;
  return std::move(scores_);
}

}  // namespace slotserve::engine
