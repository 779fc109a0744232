#include "models/seq2seq_model.h"

#include <algorithm>
#include <limits>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kernels/memory_attention.h"
#include "kernels/rfa_attention.h"
#include "kernels/rfa_cross_read.h"
#include "kernels/srformer_cross.h"
#include "models/attention_kind.h"
#include "models/block_ops.h"
#include "models/seq2seq_weights.h"

namespace slotserve::models {
namespace {

int MaxFusedProjectionWidth(const std::vector<BlockWeights>& encoder,
                            const std::vector<BlockWeights>& decoder) {
  return std::max(encoder.front().input_projection.weight.rows,
                  decoder.front().input_projection.weight.rows);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Seq2seqModel>> Seq2seqModel::Create(const Seq2seqConfig& config,
                                                                   kernels::Backend backend,
                                                                   const SafetensorsFile& file) {
  std::unique_ptr<Seq2seqModel> model(new Seq2seqModel(config, backend));
  const ModelConfig encoder_view = config.EncoderView();
  SLOTSERVE_ASSIGN_OR_RETURN(model->tok_embed_,
                             LoadMatrix(backend, file, "tok_embed.weight",
                                        TokenTableReaders(config.decoder.tie_embeddings)));
  if (!config.decoder.tie_embeddings) {
    SLOTSERVE_ASSIGN_OR_RETURN(model->lm_head_,
                               LoadMatrix(backend, file, "lm_head.weight", MatrixReaders::kLinear));
  }
  for (int layer = 0; layer < config.encoder_layers; ++layer) {
    SLOTSERVE_ASSIGN_OR_RETURN(BlockWeights block, LoadBlockWeights(encoder_view, backend, file,
                                                                    EncoderLayerPrefix(layer)));
    model->encoder_.blocks.push_back(std::move(block));
  }
  SLOTSERVE_ASSIGN_OR_RETURN(model->encoder_.final_norm,
                             LoadNorm(backend, file, "encoder.final_norm"));
  for (int layer = 0; layer < config.decoder.n_layers; ++layer) {
    SLOTSERVE_ASSIGN_OR_RETURN(BlockWeights block, LoadBlockWeights(config.decoder, backend, file,
                                                                    DecoderLayerPrefix(layer)));
    model->decoder_blocks_.push_back(std::move(block));
    SLOTSERVE_ASSIGN_OR_RETURN(CrossAttentionWeights cross,
                               LoadCrossAttentionWeights(config, backend, file, layer));
    model->cross_.push_back(std::move(cross));
  }
  SLOTSERVE_ASSIGN_OR_RETURN(model->decoder_final_norm_,
                             LoadNorm(backend, file, "decoder.final_norm"));
  model->scratch_ =
      ForwardScratch(backend, ScratchWidths{.model = config.decoder.d_model,
                                            .projections = MaxFusedProjectionWidth(
                                                model->encoder_.blocks, model->decoder_blocks_),
                                            .ffn = config.decoder.d_ffn,
                                            .vocab = config.decoder.vocab_size});
  const int64_t source_rows = config.max_source_tokens;
  const int64_t width = config.decoder.d_model;
  const int64_t slot_logit_width =
      static_cast<int64_t>(config.decoder.n_heads) * std::max(config.cross.memory_rows, 1);
  const auto allocate = [&](kernels::DeviceBuffer& buffer, int64_t floats) -> absl::Status {
    SLOTSERVE_ASSIGN_OR_RETURN(buffer, kernels::DeviceBuffer::Allocate(
                                           backend, static_cast<size_t>(floats) * sizeof(float)));
    return absl::OkStatus();
  };
  SLOTSERVE_RETURN_IF_ERROR(allocate(model->source_, source_rows * width));
  SLOTSERVE_RETURN_IF_ERROR(allocate(model->source_kv_, source_rows * 2 * width));
  SLOTSERVE_RETURN_IF_ERROR(allocate(model->filtered_kv_, source_rows * 2 * width));
  SLOTSERVE_RETURN_IF_ERROR(allocate(model->slot_logits_, source_rows * slot_logit_width));
  SLOTSERVE_RETURN_IF_ERROR(allocate(model->discarded_, source_rows * width));
  kernels::Synchronize(backend);
  return model;
}

Seq2seqModel::Seq2seqModel(const Seq2seqConfig& config, kernels::Backend backend)
    : config_(config),
      backend_(backend),
      shape_(MakeSeq2seqShape(config)),
      layout_(MakeSeq2seqSlotLayout(config)),
      self_state_floats_per_layer_(AttentionStateFloatsPerLayer(config.decoder)),
      scratch_(backend, ScratchWidths{}) {}

int64_t Seq2seqModel::state_bytes_per_request() const {
  return layout_.request_floats() * static_cast<int64_t>(sizeof(float));
}

int32_t Seq2seqModel::max_positions() const {
  const int64_t limit = AttentionContextLimit(config_.decoder.attention);
  if (limit > 0) return static_cast<int32_t>(limit);
  return std::numeric_limits<int32_t>::max() - config_.decoder.position_offset;
}

absl::StatusOr<std::unique_ptr<StateArena>> Seq2seqModel::AllocateStates(int num_slots) const {
  return AllocateStatesSharingCrossMemories(num_slots, num_slots);
}

absl::StatusOr<std::unique_ptr<StateArena>> Seq2seqModel::AllocateStatesSharingCrossMemories(
    int num_slots, int cross_memories) const {
  if (num_slots <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("AllocateStates: num_slots must be > 0, got ", num_slots));
  }
  if (cross_memories <= 0 || cross_memories > num_slots) {
    return absl::InvalidArgumentError(
        absl::StrCat("AllocateStates: cross memories must be in [1, num_slots = ", num_slots,
                     "], got ", cross_memories));
  }
  const auto zeroed = [&](int64_t floats) -> absl::StatusOr<kernels::DeviceBuffer> {
    const size_t bytes = static_cast<size_t>(floats) * sizeof(float);
    SLOTSERVE_ASSIGN_OR_RETURN(kernels::DeviceBuffer buffer,
                               kernels::DeviceBuffer::Allocate(backend_, bytes));
    kernels::FillZero(backend_, buffer.data(), bytes);
    return buffer;
  };
  SLOTSERVE_ASSIGN_OR_RETURN(kernels::DeviceBuffer slots,
                             zeroed(static_cast<int64_t>(num_slots) * layout_.slot_floats()));
  SLOTSERVE_ASSIGN_OR_RETURN(
      kernels::DeviceBuffer memory_buffer,
      zeroed(static_cast<int64_t>(cross_memories) * layout_.memory_floats()));
  SharedBlocks memories{.count = cross_memories,
                        .floats_per_block = layout_.memory_floats(),
                        .buffer = std::move(memory_buffer)};
  kernels::Synchronize(backend_);
  return std::make_unique<StateArena>(backend_, num_slots, layout_.slot_floats(), std::move(slots),
                                      std::move(memories));
}

absl::Status Seq2seqModel::CheckArena(const StateArena& states, const char* call) const {
  if (states.backend() != backend_ || states.floats_per_slot() != layout_.slot_floats() ||
      states.floats_per_shared_block() != layout_.memory_floats()) {
    return absl::InvalidArgumentError(absl::StrCat(
        call, ": the state arena was not allocated by this model (", states.floats_per_slot(),
        " floats per slot and ", states.floats_per_shared_block(), " per cross memory on ",
        kernels::BackendName(states.backend()), ", expected ", layout_.slot_floats(), " and ",
        layout_.memory_floats(), " on ", kernels::BackendName(backend_), ")"));
  }
  return absl::OkStatus();
}

absl::Status Seq2seqModel::StageCrossBlocks(const StateArena& states,
                                            std::span<const int32_t> slots, const char* call) {
  std::vector<int32_t>& blocks = step_blocks_;
  blocks.resize(slots.size());
  for (size_t i = 0; i < slots.size(); ++i) {
    blocks[i] = states.shared_block(slots[i]);
    if (blocks[i] == SharedBlockTable::kNone) {
      return absl::FailedPreconditionError(
          absl::StrCat(call, ": slot ", slots[i], " holds no source; Encode it first"));
    }
  }
  kernels::CopyHostToDevice(backend_, cross_blocks_.as<int32_t>(), blocks.data(),
                            blocks.size() * sizeof(int32_t));
  return absl::OkStatus();
}

absl::Status Seq2seqModel::CheckSlotPosition(const StateArena& states, int slot, int32_t new_tokens,
                                             const char* call) const {
  if (slot < 0 || slot >= states.num_slots()) {
    return absl::InvalidArgumentError(absl::StrCat(
        call, ": slot ", slot, " is outside the state arena [0, ", states.num_slots(), ")"));
  }
  if (static_cast<int64_t>(states.position(slot)) + new_tokens > max_positions()) {
    return absl::InvalidArgumentError(
        absl::StrCat(call, ": slot ", slot, " is at position ", states.position(slot),
                     " and cannot take ", new_tokens, " more tokens: this model holds at most ",
                     max_positions(), " positions per request"));
  }
  return absl::OkStatus();
}

absl::Status Seq2seqModel::ReserveCross(int rows) {
  if (rows <= cross_rows_) return absl::OkStatus();
  SLOTSERVE_ASSIGN_OR_RETURN(
      cross_queries_,
      kernels::DeviceBuffer::Allocate(
          backend_, static_cast<size_t>(rows) * config_.decoder.d_model * sizeof(float)));
  SLOTSERVE_ASSIGN_OR_RETURN(
      cross_blocks_,
      kernels::DeviceBuffer::Allocate(backend_, static_cast<size_t>(rows) * sizeof(int32_t)));
  cross_rows_ = rows;
  return absl::OkStatus();
}

absl::Status Seq2seqModel::Prefill(StateArena& states, int slot, std::span<const int32_t> tokens,
                                   LogitsWanted wanted, std::span<float> logits) {
  SLOTSERVE_RETURN_IF_ERROR(CheckArena(states, "Prefill"));
  if (tokens.empty()) return absl::InvalidArgumentError("Prefill: no tokens");
  SLOTSERVE_RETURN_IF_ERROR(CheckTokensInVocabulary(tokens, config_.decoder.vocab_size, "Prefill"));
  SLOTSERVE_RETURN_IF_ERROR(
      CheckSlotPosition(states, slot, static_cast<int32_t>(tokens.size()), "Prefill"));
  const int64_t vocab = config_.decoder.vocab_size;
  const bool every_logit = wanted == LogitsWanted::kEveryToken;
  const int64_t expected = every_logit ? static_cast<int64_t>(tokens.size()) * vocab : vocab;
  if (static_cast<int64_t>(logits.size()) != expected) {
    return absl::InvalidArgumentError(
        absl::StrCat("Prefill: logits holds ", logits.size(), " floats, expected ", expected));
  }
  for (size_t first = 0; first < tokens.size(); first += kMaxRowsPerPass) {
    const size_t rows = std::min<size_t>(kMaxRowsPerPass, tokens.size() - first);
    const bool last_pass = first + rows == tokens.size();
    std::span<float> pass_logits =
        every_logit ? logits.subspan(first * vocab, rows * vocab) : logits;
    SLOTSERVE_RETURN_IF_ERROR(PrefillPass(states, slot, tokens.subspan(first, rows), every_logit,
                                          !every_logit && last_pass, pass_logits));
  }
  return absl::OkStatus();
}

absl::Status Seq2seqModel::PrefillPass(StateArena& states, int slot,
                                       std::span<const int32_t> tokens, bool every_logit,
                                       bool last_logit, std::span<float> logits) {
  const int rows = static_cast<int>(tokens.size());
  SLOTSERVE_RETURN_IF_ERROR(scratch_.Reserve(rows, every_logit ? rows : 1));
  SLOTSERVE_RETURN_IF_ERROR(ReserveCross(rows));
  const int32_t start = states.position(slot);
  std::vector<int32_t> embed_positions(rows), slots(rows, slot), positions(rows);
  for (int i = 0; i < rows; ++i) {
    positions[i] = start + i;
    embed_positions[i] = start + i + config_.decoder.position_offset;
  }
  const size_t index_bytes = static_cast<size_t>(rows) * sizeof(int32_t);
  kernels::CopyHostToDevice(backend_, scratch_.tokens(), tokens.data(), index_bytes);
  kernels::CopyHostToDevice(backend_, scratch_.embed_positions(), embed_positions.data(),
                            index_bytes);
  kernels::CopyHostToDevice(backend_, scratch_.slots(), slots.data(), index_bytes);
  kernels::CopyHostToDevice(backend_, scratch_.positions(), positions.data(), index_bytes);
  SLOTSERVE_RETURN_IF_ERROR(StageCrossBlocks(states, slots, "Prefill"));
  const int logit_rows = every_logit ? rows : (last_logit ? 1 : 0);
  RunDecoder(states, rows, /*prefill=*/true, slot, start, rows - logit_rows);
  if (logit_rows > 0 && !logits.empty()) {
    kernels::CopyDeviceToHost(backend_, logits.data(), scratch_.logits(), logits.size_bytes());
  }
  kernels::Synchronize(backend_);
  states.set_position(slot, start + rows);
  return absl::OkStatus();
}

absl::Status Seq2seqModel::Step(StateArena& states, std::span<const int32_t> slots,
                                std::span<const int32_t> tokens, std::span<float> logits) {
  SLOTSERVE_RETURN_IF_ERROR(CheckArena(states, "Step"));
  if (slots.empty()) return absl::InvalidArgumentError("Step: no requests to step");
  if (tokens.size() != slots.size()) {
    return absl::InvalidArgumentError(absl::StrCat("Step: ", tokens.size(), " tokens for ",
                                                   slots.size(), " slots, expected one each"));
  }
  SLOTSERVE_RETURN_IF_ERROR(CheckTokensInVocabulary(tokens, config_.decoder.vocab_size, "Step"));
  const int64_t vocab = config_.decoder.vocab_size;
  if (static_cast<int64_t>(logits.size()) != static_cast<int64_t>(slots.size()) * vocab) {
    return absl::InvalidArgumentError(absl::StrCat("Step: logits holds ", logits.size(),
                                                   " floats, expected ", slots.size() * vocab));
  }
  // Distinct slots, checked against reused flags that are all false between steps.
  if (slot_in_step_.size() < static_cast<size_t>(states.num_slots())) {
    slot_in_step_.resize(states.num_slots(), false);
  }
  size_t marked = 0;  // slots[0, marked) are flagged
  absl::Cleanup unmark = [&] {
    for (size_t j = 0; j < marked; ++j) slot_in_step_[slots[j]] = false;
  };
  for (const int32_t slot : slots) {
    SLOTSERVE_RETURN_IF_ERROR(CheckSlotPosition(states, slot, 1, "Step"));
    if (slot_in_step_[slot]) {
      return absl::InvalidArgumentError(
          absl::StrCat("Step: slot ", slot, " appears more than once; slots must be distinct"));
    }
    slot_in_step_[slot] = true;
    ++marked;
  }
  const int rows = static_cast<int>(slots.size());
  SLOTSERVE_RETURN_IF_ERROR(scratch_.Reserve(rows, rows));
  SLOTSERVE_RETURN_IF_ERROR(ReserveCross(rows));
  std::vector<int32_t>& positions = step_positions_;
  std::vector<int32_t>& embed_positions = step_embed_positions_;
  positions.resize(rows);
  embed_positions.resize(rows);
  for (int i = 0; i < rows; ++i) {
    positions[i] = states.position(slots[i]);
    embed_positions[i] = positions[i] + config_.decoder.position_offset;
  }
  const size_t index_bytes = static_cast<size_t>(rows) * sizeof(int32_t);
  kernels::CopyHostToDevice(backend_, scratch_.tokens(), tokens.data(), index_bytes);
  kernels::CopyHostToDevice(backend_, scratch_.embed_positions(), embed_positions.data(),
                            index_bytes);
  kernels::CopyHostToDevice(backend_, scratch_.slots(), slots.data(), index_bytes);
  kernels::CopyHostToDevice(backend_, scratch_.positions(), positions.data(), index_bytes);
  SLOTSERVE_RETURN_IF_ERROR(StageCrossBlocks(states, slots, "Step"));
  RunDecoder(states, rows, /*prefill=*/false, /*slot=*/-1, /*start=*/0, /*first_logit_row=*/0);
  kernels::CopyDeviceToHost(backend_, logits.data(), scratch_.logits(), logits.size_bytes());
  kernels::Synchronize(backend_);
  for (int i = 0; i < rows; ++i) states.set_position(slots[i], positions[i] + 1);
  return absl::OkStatus();
}

void Seq2seqModel::RunDecoder(StateArena& states, int rows, bool prefill, int slot, int32_t start,
                              int first_logit_row) {
  const ModelConfig& config = config_.decoder;
  const int width = config.d_model;
  const kernels::Stream stream = nullptr;
  EmbedTokens(backend_, stream, config, tok_embed_, scratch_, rows);
  const int projection_width = scratch_.widths().projections;
  for (size_t layer = 0; layer < decoder_blocks_.size(); ++layer) {
    const BlockWeights& block = decoder_blocks_[layer];
    RunNormedLinear(backend_, stream, block.attn_norm, config.norm_eps, scratch_.hidden(),
                    scratch_.normed(), block.input_projection, rows, scratch_.projections(),
                    projection_width);
    AttentionIo io;
    io.rows = rows;
    io.projections = scratch_.projections();
    io.stride = projection_width;
    io.out = scratch_.attention();
    io.out_stride = width;
    kernels::StateView state{
        .pool = states.device_data(),
        .slot_stride = states.floats_per_slot(),
        .layer_offset = static_cast<int64_t>(layer) * self_state_floats_per_layer_};
    if (prefill) {
      block.attention->Prefill(io, {.state = state, .slot = slot, .start_position = start}, stream);
    } else {
      block.attention->Step(
          io, {.state = state, .slots = scratch_.slots(), .positions = scratch_.positions()},
          stream);
    }
    RunLinear(backend_, stream, block.o_proj, scratch_.attention(), width, rows, scratch_.hidden(),
              width, /*accumulate=*/true);
    RunCrossAttention(states, static_cast<int>(layer), rows, prefill);
    RunFeedForward(backend_, stream, config, block, scratch_, rows);
  }
  const int logit_rows = rows - first_logit_row;
  if (logit_rows <= 0) return;
  const float* hidden = scratch_.hidden() + static_cast<int64_t>(first_logit_row) * width;
  const DeviceMatrix& head = lm_head_.rows > 0 ? lm_head_ : tok_embed_;
  RunNormedLinear(backend_, stream, decoder_final_norm_, config.norm_eps, hidden, scratch_.normed(),
                  head, /*bias=*/nullptr, logit_rows, scratch_.logits(), config.vocab_size);
}

}  // namespace slotserve::models
