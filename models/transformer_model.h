// The pre-norm decoder-only transformer of docs/MODEL_FORMAT.md "The attention kinds" with a
// pluggable attention mixer: the LanguageModel every model directory loads into. Runs only through
// the kernel dispatchers, so the same code serves the reference, cpu and cuda backends.
//
// Decode steps run through a StepGraphCache on a stream the model owns: a batch of B requests
// is padded to a bucket (1, 2, 4, 8, then multiples of 8) and the step's launches for that
// padded size are captured once as a CUDA graph and replayed after that (host backends run the
// same padded launches directly, so CPU tests exercise the padding). The per-step inputs
// (tokens, slots, positions) are copied into fixed scratch buffers before each replay. Padded
// rows step the arena's padding slot: AllocateStates allocates one block past the last slot,
// zeroed before every padded step, so padded rows compute a harmless first token there and
// never touch a request's state (rows are independent in every op of the step).
// StepAndSample runs the same step and then selects from the real rows' logits where they are,
// with per-row options and adjustments staged in a reused device buffer (TokenSelector), so only
// the ids (and raw rows asked for) cross back to the host; PrefillAndSample selects from the
// prompt's last logits the same way.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/device_stream.h"
#include "kernels/step_graph_cache.h"
#include "models/forward_scratch.h"
#include "models/language_model.h"
#include "models/step_slots.h"
#include "models/token_selector.h"
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
  // Step's forward, then the selection op on the step's logits where they are (on the
  // model's stream), so only the B token ids (and the raw rows asked for) are copied back.
  absl::Status StepAndSample(StateArena& states, std::span<const int32_t> slots,
                             std::span<const int32_t> tokens, const SamplingColumns& sampling,
                             std::span<int32_t> out_tokens, std::span<float> raw_logits) override;
  // Prefill's passes, then the selection op on the last token's logits where they are.
  absl::StatusOr<int32_t> PrefillAndSample(StateArena& states, int slot,
                                           std::span<const int32_t> tokens,
                                           const SamplingColumns& sampling,
                                           std::span<float> raw_logits) override;

 private:
  // Runs one block's attention over the scratch projections, given the layer's state offset.
  using AttendFn =
      std::function<void(const AttentionLayer&, const AttentionIo&, int64_t layer_offset)>;

  TransformerModel(const ModelConfig& config, kernels::Backend backend, TransformerWeights weights,
                   kernels::DeviceStream stream);

  absl::Status CheckArena(const StateArena& states, const char* call) const;
  // What Step and StepAndSample (named by `call`) check before running anything.
  absl::Status CheckStepInputs(const StateArena& states, std::span<const int32_t> slots,
                               std::span<const int32_t> tokens, const char* call);
  // Queues a checked decode step on stream_: per-row inputs, padding, the graph replay; the
  // step's logits are then in scratch_.logits() rows [0, slots.size()). On failure the stream
  // is synchronised and the slots' positions are unchanged.
  absl::Status QueueStep(StateArena& states, std::span<const int32_t> slots,
                         std::span<const int32_t> tokens, const char* call);
  // Waits for everything queued on stream_ and advances the stepped slots' positions.
  void FinishStep(StateArena& states, std::span<const int32_t> slots);
  // What Prefill and PrefillAndSample (named by `call`) check before running anything.
  absl::Status CheckPrefillInputs(const StateArena& states, int slot,
                                  std::span<const int32_t> tokens, const char* call) const;
  // Feeds checked `tokens` pass by pass. Host logits as Prefill's; with no `logits` (and not
  // every_logit) the last token's logits stay in scratch_.logits() row 0.
  absl::Status RunPrefill(StateArena& states, int slot, std::span<const int32_t> tokens,
                          bool every_logit, std::span<float> logits);
  // Stages a selecting call's rows in selector_ (queued on `stream`), naming `call` on failure.
  absl::Status StageSampling(const SamplingColumns& sampling, kernels::Stream stream,
                             const char* call);
  // Prefills tokens (at most kMaxRowsPerPass) and advances the slot's position; copies the
  // logits asked for to the host unless `logits` is empty.
  absl::Status PrefillPass(StateArena& states, int slot, std::span<const int32_t> tokens,
                           bool every_logit, bool last_logit, std::span<float> logits);
  // Embeds the `rows` tokens already in scratch and runs every block, queued on `stream`.
  void RunBlocks(int rows, kernels::Stream stream, const AttendFn& attend);
  // lm_head(final_norm(h)) for `rows` hidden rows starting at scratch row `first_row`, into
  // scratch logits rows [0, rows), queued on `stream`.
  void ComputeLogits(int first_row, int rows, kernels::Stream stream);

  ModelConfig config_;
  kernels::Backend backend_;
  TransformerWeights weights_;
  int64_t state_floats_per_layer_;
  // Whether a decode step at position 0 reads state that earlier steps left (a recurrent
  // state) rather than only what it writes (a KV cache): the padding slot is then zeroed
  // before every padded step.
  bool padding_state_accumulates_ = true;
  // The decode step's stream (capture needs a stream of its own); prefill uses the null stream,
  // which this stream is ordered with.
  kernels::DeviceStream stream_;
  ForwardScratch scratch_;
  // Declared after scratch_ so its graphs are destroyed before the buffers they point into.
  kernels::StepGraphCache step_graphs_;
  // What the cached graphs bake in besides the weights: scratch addresses and the arena base
  // (the slot stride is fixed by the model, CheckArena ensures it).
  int64_t graphs_scratch_generation_ = -1;
  const float* graphs_arena_ = nullptr;
  // Host staging of a step's per-row inputs, kept so a decode step allocates nothing.
  std::vector<int32_t> step_tokens_;
  std::vector<int32_t> step_slots_;
  std::vector<int32_t> step_positions_;
  std::vector<int32_t> step_embed_positions_;
  // Slots inside the arena, distinct, below max_positions: checked before a step runs.
  StepSlotCheck slot_check_;
  // A selecting call's per-row options and adjustments on the device, and the ids it picks.
  TokenSelector selector_;
};

}  // namespace slotserve::models
