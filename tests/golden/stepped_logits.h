// A golden sequence fed to a model as the engine feeds it, for tests that compare the logits
// of a mode (--int8-activations, --kv-cache-dtype) with that mode's reference: whole, and one
// token per Step in a shared batch.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "models/language_model.h"

namespace slotserve::golden {

// One Prefill of every token into `slot` (empty), every token's logits: [tokens, vocab].
absl::StatusOr<std::vector<float>> WholePromptLogits(models::LanguageModel& model,
                                                     models::StateArena& states, int slot,
                                                     std::span<const int32_t> tokens);

// `tokens` in slot 2 of a batch of three (slots 0, 2 and 3 of `states`, all empty), the first
// token prefilled and then one token per Step, the other two slots fed other tokens of the
// sequence: the logits of slot 2 after each token, [tokens, vocab].
absl::StatusOr<std::vector<float>> SteppedInABatchLogits(models::LanguageModel& model,
                                                         models::StateArena& states,
                                                         std::span<const int32_t> tokens);

}  // namespace slotserve::golden
