// The pre-norm decoder-only transformer of DESIGN §3 with a pluggable attention mixer: the
// LanguageModel every model directory loads into. Runs only through the kernel dispatchers,
// so the same code serves the reference, cpu and cuda backends.
#pragma once

#include <functional>
#include <memory>
#include <span>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/forward_scratch.h"
#include "models/language_model.h"
#include "models/transformer_weights.h"

namespace slotserve::models {

class TransformerModel final : public LanguageModel {
 public:
  // Prefill runs at most this many tokens per forward pass, bounding scratch memory; longer
  // prompts are fed in consecutive chunks (the result does not depend on the chunking).
  static constexpr int kMaxRowsPerPass = 256;

  // `file` must already have passed CheckWeights(config, file).
  static absl::StatusOr<std::unique_ptr<TransformerModel>> Create(const ModelConfig& config,
                                                                  kernels::Backend backend,
                                                                  const SafetensorsFile& file);

  const ModelConfig& config() const override { return config_; }
  kernels::Backend backend() const override { return backend_; }
  int64_t state_bytes_per_request() const override;
  int32_t max_positions() const override;
  absl::StatusOr<std::unique_ptr<StateArena>> AllocateStates(int num_slots) const override;
  absl::Status Prefill(StateArena& states, int slot, std::span<const int32_t> tokens,
                       LogitsWanted wanted, std::span<float> logits) override;
  absl::Status Step(StateArena& states, std::span<const int32_t> slots,
                    std::span<const int32_t> tokens, std::span<float> logits) override;

 private:
  // Runs one block's attention over the scratch projections, given the layer's state offset.
  using AttendFn =
      std::function<void(const AttentionLayer&, const AttentionIo&, int64_t layer_offset)>;

  TransformerModel(const ModelConfig& config, kernels::Backend backend, TransformerWeights weights);

  absl::Status CheckArena(const StateArena& states, const char* call) const;
  absl::Status CheckTokens(std::span<const int32_t> tokens, const char* call) const;
  // Prefills tokens (at most kMaxRowsPerPass) and advances the slot's position.
  absl::Status PrefillPass(StateArena& states, int slot, std::span<const int32_t> tokens,
                           bool every_logit, bool last_logit, std::span<float> logits);
  // Embeds the `rows` tokens already in scratch and runs every block.
  void RunBlocks(int rows, const AttendFn& attend);
  // lm_head(final_norm(h)) for `rows` hidden rows starting at scratch row `first_row`, copied to
  // host `logits` ([rows, V]).
  void ComputeLogits(int first_row, int rows, std::span<float> logits);

  ModelConfig config_;
  kernels::Backend backend_;
  TransformerWeights weights_;
  int64_t state_floats_per_layer_;
  ForwardScratch scratch_;
};

}  // namespace slotserve::models
