// A decoder-only LM loaded from a model directory, running on one backend. Not thread-safe:
// one engine thread owns it (DESIGN §1).
#pragma once

#include <filesystem>
#include <memory>
#include <span>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/backend.h"
#include "models/model_config.h"
#include "models/state_arena.h"
#include "models/token_sampling.h"

namespace slotserve::models {

enum class LogitsWanted { kLastToken, kEveryToken };

class LanguageModel {
 public:
  virtual ~LanguageModel() = default;

  // Loads config.json and model.safetensors from `dir` (tokenizer.model is the engine's
  // business). Every refusal names the file and the key or tensor at fault.
  static absl::StatusOr<std::unique_ptr<LanguageModel>> Load(const std::filesystem::path& dir,
                                                             kernels::Backend backend);

  virtual const ModelConfig& config() const = 0;
  virtual kernels::Backend backend() const = 0;
  // State bytes one request holds (DESIGN §3), the unit the slot pool is sized in.
  virtual int64_t state_bytes_per_request() const = 0;
  // Longest sequence one request may reach (max_context for softmax, unbounded otherwise).
  virtual int32_t max_positions() const = 0;

  virtual absl::StatusOr<std::unique_ptr<StateArena>> AllocateStates(int num_slots) const = 0;

  // Feeds `tokens` (one request) into `slot`, continuing from the slot's position, and
  // advances it. Writes host logits: [vocab] for kLastToken, [tokens.size(), vocab] for
  // kEveryToken. Tokens are validated against the vocabulary first.
  virtual absl::Status Prefill(StateArena& states, int slot, std::span<const int32_t> tokens,
                               LogitsWanted wanted, std::span<float> logits) = 0;

  // One token for each of B requests: tokens[i] goes to slots[i] (distinct slots).
  // Writes host logits [B, vocab] and advances each slot's position.
  virtual absl::Status Step(StateArena& states, std::span<const int32_t> slots,
                            std::span<const int32_t> tokens, std::span<float> logits) = 0;

  // The same step as Step (same states and positions afterwards), then picks each row's next
  // token as sampling[i] says (kernels/sampling.h) and writes only the ids to out_tokens [B].
  // A model whose logits live on a device samples them there, so only B ids cross to the host.
  // This default steps into host logits and runs the reference sampling op on them, so every
  // model gives the same tokens (it is what a model without a device sampler does).
  virtual absl::Status StepAndSample(StateArena& states, std::span<const int32_t> slots,
                                     std::span<const int32_t> tokens,
                                     std::span<const TokenSampling> sampling,
                                     std::span<int32_t> out_tokens);
};

}  // namespace slotserve::models
