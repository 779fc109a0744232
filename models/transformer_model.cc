#include "models/transformer_model.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kernels/activation.h"
#include "kernels/device_memory.h"
#include "kernels/embedding.h"
#include "kernels/layer_norm.h"
#include "kernels/linear.h"
#include "kernels/positions.h"
#include "models/attention_kind.h"
#include "models/block_ops.h"
#include "models/step_slots.h"

namespace slotserve::models {
namespace {

int FusedProjectionWidth(const TransformerWeights& weights) {
  return weights.blocks.front().input_projection.weight.rows;
}

// The batch size a decode step of `rows` requests is padded to: 1, 2, 4, 8, then multiples of 8
// (vLLM's buckets), so a few dozen captured graphs serve every batch size up to 256 while a
// step never computes more than 7 wasted rows (powers of two would double a batch of 33).
int PaddedStepRows(int rows) {
  if (rows <= 8) {
    int padded = 1;
    while (padded < rows) padded *= 2;
    return padded;
  }
  return (rows + 7) / 8 * 8;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TransformerModel>> TransformerModel::Create(
    const ModelConfig& config, kernels::Backend backend, const SafetensorsFile& file) {
  SLOTSERVE_ASSIGN_OR_RETURN(TransformerWeights weights,
                             LoadTransformerWeights(config, backend, file));
  SLOTSERVE_ASSIGN_OR_RETURN(kernels::DeviceStream stream, kernels::DeviceStream::Create(backend));
  return std::unique_ptr<TransformerModel>(
      new TransformerModel(config, backend, std::move(weights), std::move(stream)));
}

TransformerModel::TransformerModel(const ModelConfig& config, kernels::Backend backend,
                                   TransformerWeights weights, kernels::DeviceStream stream)
    : config_(config),
      backend_(backend),
      weights_(std::move(weights)),
      state_floats_per_layer_(AttentionStateFloatsPerLayer(config)),
      padding_state_accumulates_(!DescribeAttentionKind(config.attention.kind).memory_is_context),
      stream_(std::move(stream)),
      scratch_(backend, ScratchWidths{.model = config.d_model,
                                      .projections = FusedProjectionWidth(weights_),
                                      .ffn = config.d_ffn,
                                      .vocab = config.vocab_size}),
      step_graphs_(backend),
      selector_(backend) {}

int64_t TransformerModel::state_bytes_per_request() const {
  return state_floats_per_layer_ * config_.n_layers * static_cast<int64_t>(sizeof(float));
}

int32_t TransformerModel::max_positions() const {
  // A KV cache's rows, or a control's positions (abc linformer / compressive).
  const int64_t limit = AttentionContextLimit(config_.attention);
  if (limit > 0) return static_cast<int32_t>(limit);
  // Bounded only by the position fed to the embedding staying an int32.
  return std::numeric_limits<int32_t>::max() - config_.position_offset;
}

absl::StatusOr<std::unique_ptr<StateArena>> TransformerModel::AllocateStates(int num_slots) const {
  if (num_slots <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("AllocateStates: num_slots must be > 0, got ", num_slots));
  }
  const int64_t floats_per_slot = state_floats_per_layer_ * config_.n_layers;
  // One block more than asked for: the padding slot (index num_slots) that the padded rows of a
  // decode step update, so they never touch a request's slot (see the header).
  const size_t bytes = static_cast<size_t>(num_slots + 1) * floats_per_slot * sizeof(float);
  SLOTSERVE_ASSIGN_OR_RETURN(kernels::DeviceBuffer buffer,
                             kernels::DeviceBuffer::Allocate(backend_, bytes));
  kernels::FillZero(backend_, buffer.data(), bytes);
  kernels::Synchronize(backend_);
  return std::make_unique<StateArena>(backend_, num_slots, floats_per_slot, std::move(buffer));
}

absl::Status TransformerModel::CheckArena(const StateArena& states, const char* call) const {
  if (states.backend() != backend_ ||
      states.floats_per_slot() != state_floats_per_layer_ * config_.n_layers) {
    return absl::InvalidArgumentError(absl::StrCat(
        call, ": the state arena was not allocated by this model (", states.floats_per_slot(),
        " floats per slot on ", kernels::BackendName(states.backend()), ", expected ",
        state_floats_per_layer_ * config_.n_layers, " on ", kernels::BackendName(backend_), ")"));
  }
  return absl::OkStatus();
}

absl::Status TransformerModel::CheckPrefillInputs(const StateArena& states, int slot,
                                                  std::span<const int32_t> tokens,
                                                  const char* call) const {
  SLOTSERVE_RETURN_IF_ERROR(CheckArena(states, call));
  if (slot < 0 || slot >= states.num_slots()) {
    return absl::InvalidArgumentError(absl::StrCat(
        call, ": slot ", slot, " is outside the state arena [0, ", states.num_slots(), ")"));
  }
  if (tokens.empty()) return absl::InvalidArgumentError(absl::StrCat(call, ": no tokens to feed"));
  SLOTSERVE_RETURN_IF_ERROR(CheckTokensInVocabulary(tokens, config_.vocab_size, call));
  const int64_t start = states.position(slot);
  if (start + static_cast<int64_t>(tokens.size()) > max_positions()) {
    return absl::InvalidArgumentError(absl::StrCat(
        call, ": slot ", slot, " is at position ", start, " and cannot take ", tokens.size(),
        " more tokens: this model holds at most ", max_positions(), " positions per request"));
  }
  return absl::OkStatus();
}

absl::Status TransformerModel::Prefill(StateArena& states, int slot,
                                       std::span<const int32_t> tokens, LogitsWanted wanted,
                                       std::span<float> logits) {
  SLOTSERVE_RETURN_IF_ERROR(CheckPrefillInputs(states, slot, tokens, "Prefill"));
  const int64_t vocab = config_.vocab_size;
  const bool every_logit = wanted == LogitsWanted::kEveryToken;
  const int64_t expected_logits = every_logit ? static_cast<int64_t>(tokens.size()) * vocab : vocab;
  if (static_cast<int64_t>(logits.size()) != expected_logits) {
    return absl::InvalidArgumentError(absl::StrCat("Prefill: logits holds ", logits.size(),
                                                   " floats, expected ", expected_logits));
  }
  return RunPrefill(states, slot, tokens, every_logit, logits);
}

absl::StatusOr<int32_t> TransformerModel::PrefillAndSample(StateArena& states, int slot,
                                                           std::span<const int32_t> tokens,
                                                           const SamplingColumns& sampling,
                                                           std::span<float> raw_logits) {
  SLOTSERVE_RETURN_IF_ERROR(CheckPrefillInputs(states, slot, tokens, "PrefillAndSample"));
  SLOTSERVE_RETURN_IF_ERROR(CheckSamplingColumns(sampling, 1, 1, raw_logits.size(),
                                                 config_.vocab_size, "PrefillAndSample"));
  // Staged first, so a failure here leaves the slot untouched.
  SLOTSERVE_RETURN_IF_ERROR(StageSampling(sampling, /*stream=*/nullptr, "PrefillAndSample"));
  // The last token's logits stay where they are (scratch row 0) for the op.
  SLOTSERVE_RETURN_IF_ERROR(RunPrefill(states, slot, tokens, /*every_logit=*/false, {}));
  int32_t token = -1;
  selector_.Select(scratch_.logits(), config_.vocab_size, config_.vocab_size, {&token, 1},
                   raw_logits, /*stream=*/nullptr);
  kernels::Synchronize(backend_);
  return token;
}

absl::Status TransformerModel::RunPrefill(StateArena& states, int slot,
                                          std::span<const int32_t> tokens, bool every_logit,
                                          std::span<float> logits) {
  return ForEachPrefillPass(
      tokens.size(), kMaxRowsPerPass, every_logit, config_.vocab_size, logits,
      [&](size_t first, size_t rows, bool every, bool last, std::span<float> pass_logits) {
        return PrefillPass(states, slot, tokens.subspan(first, rows), every, last, pass_logits);
      });
}

absl::Status TransformerModel::PrefillPass(StateArena& states, int slot,
                                           std::span<const int32_t> tokens, bool every_logit,
                                           bool last_logit, std::span<float> logits) {
  const int rows = static_cast<int>(tokens.size());
  SLOTSERVE_RETURN_IF_ERROR(scratch_.Reserve(rows, every_logit ? rows : 1));
  const int32_t start = states.position(slot);
  std::vector<int32_t> embed_positions(rows);
  for (int i = 0; i < rows; ++i) embed_positions[i] = start + i + config_.position_offset;
  kernels::CopyHostToDevice(backend_, scratch_.tokens(), tokens.data(), tokens.size_bytes());
  kernels::CopyHostToDevice(backend_, scratch_.embed_positions(), embed_positions.data(),
                            embed_positions.size() * sizeof(int32_t));

  kernels::PrefillTarget target;
  target.state.pool = states.device_data();
  target.state.slot_stride = states.floats_per_slot();
  target.slot = slot;
  target.start_position = start;
  RunBlocks(rows, /*stream=*/nullptr,
            [&](const AttentionLayer& attention, const AttentionIo& io, int64_t layer_offset) {
              target.state.layer_offset = layer_offset;
              attention.Prefill(io, target, /*stream=*/nullptr);
            });
  if (every_logit || last_logit) {
    const int logit_rows = every_logit ? rows : 1;
    ComputeLogits(rows - logit_rows, logit_rows, /*stream=*/nullptr);
    if (!logits.empty()) {
      kernels::CopyDeviceToHost(backend_, logits.data(), scratch_.logits(), logits.size_bytes());
    }
  }
  kernels::Synchronize(backend_);
  states.set_position(slot, start + rows);
  return absl::OkStatus();
}

absl::Status TransformerModel::CheckStepInputs(const StateArena& states,
                                               std::span<const int32_t> slots,
                                               std::span<const int32_t> tokens, const char* call) {
  SLOTSERVE_RETURN_IF_ERROR(CheckArena(states, call));
  if (slots.empty()) return absl::InvalidArgumentError(absl::StrCat(call, ": no requests to step"));
  if (tokens.size() != slots.size()) {
    return absl::InvalidArgumentError(absl::StrCat(call, ": ", tokens.size(), " tokens for ",
                                                   slots.size(), " slots, expected one each"));
  }
  SLOTSERVE_RETURN_IF_ERROR(CheckTokensInVocabulary(tokens, config_.vocab_size, call));
  return slot_check_.Check(states, slots, max_positions(), call);
}

absl::Status TransformerModel::Step(StateArena& states, std::span<const int32_t> slots,
                                    std::span<const int32_t> tokens, std::span<float> logits) {
  SLOTSERVE_RETURN_IF_ERROR(CheckStepInputs(states, slots, tokens, "Step"));
  const int64_t vocab = config_.vocab_size;
  if (static_cast<int64_t>(logits.size()) != static_cast<int64_t>(slots.size()) * vocab) {
    return absl::InvalidArgumentError(absl::StrCat("Step: logits holds ", logits.size(),
                                                   " floats, expected ", slots.size() * vocab));
  }
  SLOTSERVE_RETURN_IF_ERROR(QueueStep(states, slots, tokens, "Step"));
  // Only the real rows' logits cross to the host (the caller's buffer is not a fixed address,
  // so this copy stays outside the graph).
  kernels::CopyDeviceToHost(backend_, logits.data(), scratch_.logits(), logits.size_bytes(),
                            stream_.get());
  FinishStep(states, slots);
  return absl::OkStatus();
}

absl::Status TransformerModel::StageSampling(const SamplingColumns& sampling,
                                             kernels::Stream stream, const char* call) {
  if (absl::Status staged = selector_.Stage(sampling, stream); !staged.ok()) {
    return absl::Status(staged.code(), absl::StrCat(call,
                                                    ": staging the sampling options on the "
                                                    "device failed: ",
                                                    staged.message()));
  }
  return absl::OkStatus();
}

absl::Status TransformerModel::StepAndSample(StateArena& states, std::span<const int32_t> slots,
                                             std::span<const int32_t> tokens,
                                             const SamplingColumns& sampling,
                                             std::span<int32_t> out_tokens,
                                             std::span<float> raw_logits) {
  SLOTSERVE_RETURN_IF_ERROR(CheckStepInputs(states, slots, tokens, "StepAndSample"));
  SLOTSERVE_RETURN_IF_ERROR(CheckSamplingColumns(sampling, slots.size(), out_tokens.size(),
                                                 raw_logits.size(), config_.vocab_size,
                                                 "StepAndSample"));
  const kernels::Stream stream = stream_.get();
  // Staged first, so a failure here leaves every slot untouched.
  SLOTSERVE_RETURN_IF_ERROR(StageSampling(sampling, stream, "StepAndSample"));
  SLOTSERVE_RETURN_IF_ERROR(QueueStep(states, slots, tokens, "StepAndSample"));
  // Only the real rows are selected from (the padded rows' logits follow them in scratch), and
  // only their ids, plus the raw rows asked for, cross to the host.
  selector_.Select(scratch_.logits(), config_.vocab_size, config_.vocab_size, out_tokens,
                   raw_logits, stream);
  FinishStep(states, slots);
  return absl::OkStatus();
}

absl::Status TransformerModel::QueueStep(StateArena& states, std::span<const int32_t> slots,
                                         std::span<const int32_t> tokens, const char* call) {
  const int rows = static_cast<int>(slots.size());
  const int padded_rows = PaddedStepRows(rows);
  SLOTSERVE_RETURN_IF_ERROR(scratch_.Reserve(padded_rows, padded_rows));
  // A graph points at the scratch buffers and the arena it was captured with.
  if (scratch_.generation() != graphs_scratch_generation_ ||
      states.device_data() != graphs_arena_) {
    step_graphs_.Invalidate();
    graphs_scratch_generation_ = scratch_.generation();
    graphs_arena_ = states.device_data();
  }

  // Padded rows: token 0 at position 0 of the padding slot.
  const int32_t padding_slot = states.num_slots();
  step_tokens_.assign(padded_rows, 0);
  step_slots_.assign(padded_rows, padding_slot);
  step_positions_.assign(padded_rows, 0);
  step_embed_positions_.assign(padded_rows, config_.position_offset);
  for (int i = 0; i < rows; ++i) {
    step_tokens_[i] = tokens[i];
    step_slots_[i] = slots[i];
    step_positions_[i] = states.position(slots[i]);
    step_embed_positions_[i] = step_positions_[i] + config_.position_offset;
  }
  const kernels::Stream stream = stream_.get();
  const size_t index_bytes = static_cast<size_t>(padded_rows) * sizeof(int32_t);
  kernels::CopyHostToDevice(backend_, scratch_.tokens(), step_tokens_.data(), index_bytes, stream);
  kernels::CopyHostToDevice(backend_, scratch_.embed_positions(), step_embed_positions_.data(),
                            index_bytes, stream);
  kernels::CopyHostToDevice(backend_, scratch_.slots(), step_slots_.data(), index_bytes, stream);
  kernels::CopyHostToDevice(backend_, scratch_.positions(), step_positions_.data(), index_bytes,
                            stream);
  if (padded_rows > rows && padding_state_accumulates_) {
    // A recurrent state: empty again, so the padded rows' state never accumulates across steps
    // (it could overflow; the rows are independent, but inf/NaN there is needless). It is the
    // kind's constant-size state, so this is cheap. A KV cache (memory_is_context) is skipped:
    // a step at position 0 writes row 0 before it reads rows 0..0, so the padding slot's
    // contents never carry over, and zeroing its whole cache (up to GBs per step at long
    // contexts) would read nothing back; AllocateStates zeroed it once.
    kernels::FillZero(backend_, states.device_data() + padding_slot * states.floats_per_slot(),
                      static_cast<size_t>(states.bytes_per_slot()), stream);
  }

  kernels::StepTarget target;
  target.state.pool = states.device_data();
  target.state.slot_stride = states.floats_per_slot();
  target.slots = scratch_.slots();
  target.positions = scratch_.positions();
  const absl::Status ran =
      step_graphs_.Run(padded_rows, stream, [&](kernels::Stream recording_stream) {
        RunBlocks(
            padded_rows, recording_stream,
            [&](const AttentionLayer& attention, const AttentionIo& io, int64_t layer_offset) {
              target.state.layer_offset = layer_offset;
              attention.Step(io, target, recording_stream);
            });
        ComputeLogits(0, padded_rows, recording_stream);
      });
  if (!ran.ok()) {
    kernels::Synchronize(backend_, stream);
    return absl::Status(ran.code(), absl::StrCat(call, ": running the decode step padded to ",
                                                 padded_rows, " rows failed: ", ran.message()));
  }
  return absl::OkStatus();
}

void TransformerModel::FinishStep(StateArena& states, std::span<const int32_t> slots) {
  kernels::Synchronize(backend_, stream_.get());
  for (size_t i = 0; i < slots.size(); ++i) {
    states.set_position(slots[i], step_positions_[i] + 1);
  }
}

void TransformerModel::RunBlocks(int rows, kernels::Stream stream, const AttendFn& attend) {
  const int width = config_.d_model;
  float* hidden = scratch_.hidden();
  float* normed = scratch_.normed();

  EmbedTokens(backend_, stream, config_, weights_.tok_embed, scratch_, rows);

  const int projection_width = scratch_.widths().projections;
  for (size_t layer = 0; layer < weights_.blocks.size(); ++layer) {
    const BlockWeights& block = weights_.blocks[layer];
    // h = h + o_proj(attn(attn_norm(h)))
    RunNormedLinear(backend_, stream, block.attn_norm, config_.norm_eps, hidden, normed,
                    block.input_projection, rows, scratch_.projections(), projection_width);
    AttentionIo io;
    io.rows = rows;
    io.projections = scratch_.projections();
    io.stride = projection_width;
    io.out = scratch_.attention();
    io.out_stride = width;
    attend(*block.attention, io, static_cast<int64_t>(layer) * state_floats_per_layer_);
    RunLinear(backend_, stream, block.o_proj, scratch_.attention(), width, rows, hidden, width,
              /*accumulate=*/true);
    // h = h + down(act(up(ffn_norm(h))))
    RunFeedForward(backend_, stream, config_, block, scratch_, rows);
  }
}

void TransformerModel::ComputeLogits(int first_row, int rows, kernels::Stream stream) {
  const int width = config_.d_model;
  const float* hidden = scratch_.hidden() + static_cast<int64_t>(first_row) * width;
  // lm_head has no bias (and is tok_embed itself when tie_embeddings).
  RunNormedLinear(backend_, stream, weights_.final_norm, config_.norm_eps, hidden,
                  scratch_.normed(), weights_.head(), /*bias=*/nullptr, rows, scratch_.logits(),
                  config_.vocab_size);
}

}  // namespace slotserve::models
