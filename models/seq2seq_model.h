// The encoder–decoder model of docs/ARCHITECTURE.md "Encoder–decoder models": a bidirectional
// softmax encoder, whose output is compressed once per request (Encode) into the cross memory kept
// in the request's slot, and a pre-norm decoder whose blocks add a cross-attention sub-block
// between self-attention and the FFN. Runs through the kernel dispatchers only, so one code path
// serves every backend.
//
// A request's state (seq2seq_slot_layout.h) is its slot (the decoder's self-attention state,
// per hypothesis) and a cross memory block of the arena's shared blocks (the source length and
// each layer's cross memory, written once by Encode): Copy of a slot (beams, choices) shares the
// block, Save / Restore (sessions) carry it, so every path sees the whole request. Decode steps run
// the launches directly (no CUDA graph capture yet).
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/device_memory.h"
#include "models/cross_attention_weights.h"
#include "models/forward_scratch.h"
#include "models/language_model.h"
#include "models/seq2seq_config.h"
#include "models/seq2seq_slot_layout.h"
#include "models/transformer_weights.h"

namespace slotserve::models {

class Seq2seqModel final : public LanguageModel {
 public:
  // Decoder prefill runs at most this many tokens per pass (scratch memory stays bounded).
  static constexpr int kMaxRowsPerPass = 256;

  // `file` must already have passed CheckSeq2seqWeights(config, file).
  static absl::StatusOr<std::unique_ptr<Seq2seqModel>> Create(const Seq2seqConfig& config,
                                                              kernels::Backend backend,
                                                              const SafetensorsFile& file);

  const ModelConfig& config() const override { return config_.decoder; }
  kernels::Backend backend() const override { return backend_; }
  int64_t state_bytes_per_request() const override;
  int32_t max_positions() const override;
  // One cross memory per slot: every request can have its own source whatever its width.
  absl::StatusOr<std::unique_ptr<StateArena>> AllocateStates(int num_slots) const override;
  // `num_slots` slots sharing `cross_memories` (1..num_slots) cross memory blocks: a request
  // holds one block however many slots its beams or choices take.
  absl::StatusOr<std::unique_ptr<StateArena>> AllocateStatesSharingCrossMemories(
      int num_slots, int cross_memories) const override;
  const Seq2seqShape* seq2seq() const override { return &shape_; }
  absl::Status Encode(StateArena& states, int slot, std::span<const int32_t> source) override;
  absl::Status Prefill(StateArena& states, int slot, std::span<const int32_t> tokens,
                       LogitsWanted wanted, std::span<float> logits) override;
  absl::Status Step(StateArena& states, std::span<const int32_t> slots,
                    std::span<const int32_t> tokens, std::span<float> logits) override;

 private:
  struct EncoderWeights {
    std::vector<BlockWeights> blocks;
    NormWeights final_norm;
  };

  Seq2seqModel(const Seq2seqConfig& config, kernels::Backend backend);

  absl::Status CheckArena(const StateArena& states, const char* call) const;
  absl::Status CheckSlotPosition(const StateArena& states, int slot, int32_t new_tokens,
                                 const char* call) const;
  // Stages each row's cross memory block (the block its slot reads) in cross_blocks_;
  // FAILED_PRECONDITION naming `call` for a slot with none (never encoded).
  absl::Status StageCrossBlocks(const StateArena& states, std::span<const int32_t> slots,
                                const char* call);
  // Grows the buffers the cross sub-blocks and Encode use beyond ForwardScratch.
  absl::Status ReserveCross(int rows);

  // The encoder over the `rows` source tokens in scratch, then encoder.final_norm into source_.
  void RunEncoder(int rows);
  // Writes decoder layer `layer`'s cross memory into shared block `block` from the
  // `positions` rows of source_.
  void BuildCrossMemory(StateArena& states, int block, int layer, int positions);

  // The decoder over `rows` scratch rows (tokens, embed positions, slots and positions staged):
  // `prefill` when they are one request's consecutive tokens (slot `slot`, from position
  // `start`), else one token of each row's own slot. Logits of rows [first_logit_row, rows) go
  // to scratch logits.
  void RunDecoder(StateArena& states, int rows, bool prefill, int slot, int32_t start,
                  int first_logit_row);
  void RunCrossAttention(StateArena& states, int layer, int rows, bool prefill);
  absl::Status PrefillPass(StateArena& states, int slot, std::span<const int32_t> tokens,
                           bool every_logit, bool last_logit, std::span<float> logits);

  Seq2seqConfig config_;
  kernels::Backend backend_;
  Seq2seqShape shape_;
  Seq2seqSlotLayout layout_;
  DeviceMatrix tok_embed_;
  DeviceMatrix lm_head_;  // empty when tied
  EncoderWeights encoder_;
  std::vector<BlockWeights> decoder_blocks_;
  std::vector<CrossAttentionWeights> cross_;
  NormWeights decoder_final_norm_;
  int64_t self_state_floats_per_layer_ = 0;
  ForwardScratch scratch_;
  // Cross sub-block and Encode buffers: the cross queries [rows, E]; the encoder output X
  // [N, E]; K and V side by side [N, 2E]; ConvLuna's filtered K, V [N, 2E]; abc's slot logits
  // [N, H*M]; the discarded output of rfa's memory build [N, E].
  int cross_rows_ = 0;
  kernels::DeviceBuffer cross_queries_;
  kernels::DeviceBuffer cross_blocks_;  // [rows] int32: each row's cross memory block
  kernels::DeviceBuffer source_, source_kv_, filtered_kv_, slot_logits_, discarded_;
  // Host staging of a decode step's per-row inputs and the distinct-slots flags (all false
  // between steps), kept so a step allocates nothing once warm.
  std::vector<int32_t> step_positions_;
  std::vector<int32_t> step_embed_positions_;
  std::vector<bool> slot_in_step_;
  std::vector<int32_t> step_blocks_;
};

}  // namespace slotserve::models
