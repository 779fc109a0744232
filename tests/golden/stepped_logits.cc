#include "tests/golden/stepped_logits.h"

#include <algorithm>

#include "base/status_macros.h"

namespace slotserve::golden {

absl::StatusOr<std::vector<float>> WholePromptLogits(models::LanguageModel& model,
                                                     models::StateArena& states, int slot,
                                                     std::span<const int32_t> tokens) {
  std::vector<float> logits(tokens.size() * model.config().vocab_size);
  SLOTSERVE_RETURN_IF_ERROR(
      model.Prefill(states, slot, tokens, models::LogitsWanted::kEveryToken, logits));
  return logits;
}

absl::StatusOr<std::vector<float>> SteppedInABatchLogits(models::LanguageModel& model,
                                                         models::StateArena& states,
                                                         std::span<const int32_t> tokens) {
  const size_t n = tokens.size();
  const size_t vocab = model.config().vocab_size;
  std::vector<float> target(n * vocab);
  for (int32_t slot : {0, 2, 3}) {
    std::vector<float> first(vocab);
    SLOTSERVE_RETURN_IF_ERROR(
        model.Prefill(states, slot, tokens.first(1), models::LogitsWanted::kEveryToken, first));
    if (slot == 2) std::copy(first.begin(), first.end(), target.begin());
  }
  const std::vector<int32_t> slots = {0, 2, 3};
  std::vector<float> logits(3 * vocab);
  for (size_t t = 1; t < n; ++t) {
    const std::vector<int32_t> step_tokens = {tokens[n - t], tokens[t], tokens[(t * 7) % n]};
    SLOTSERVE_RETURN_IF_ERROR(model.Step(states, slots, step_tokens, logits));
    std::copy_n(logits.begin() + vocab, vocab, target.begin() + t * vocab);
  }
  return target;
}

}  // namespace slotserve::golden
