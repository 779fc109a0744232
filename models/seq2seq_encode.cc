// Seq2seqModel::Encode: the encoder over a request's source (bidirectional softmax blocks, then
// encoder.final_norm) and, from its output X, each decoder layer's cross memory in a fresh
// cross memory block the slot reads (shared with the slots later forked from it).
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kernels/bidirectional_attention.h"
#include "models/block_ops.h"
#include "models/cross_attention_kind.h"
#include "models/seq2seq_model.h"

namespace slotserve::models {

absl::Status Seq2seqModel::Encode(StateArena& states, int slot, std::span<const int32_t> source) {
  SLOTSERVE_RETURN_IF_ERROR(CheckArena(states, "Encode"));
  if (slot < 0 || slot >= states.num_slots()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Encode: slot ", slot, " is outside the state arena [0, ", states.num_slots(), ")"));
  }
  if (source.empty() || static_cast<int64_t>(source.size()) > config_.max_source_tokens) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Encode: a source of ", source.size(), " tokens; expected 1 to encoder.max_source_tokens (",
        config_.max_source_tokens, ")"));
  }
  SLOTSERVE_RETURN_IF_ERROR(CheckTokensInVocabulary(source, config_.decoder.vocab_size, "Encode"));
  SLOTSERVE_RETURN_IF_ERROR(states.Reset(slot));
  SLOTSERVE_ASSIGN_OR_RETURN(const int block, states.AttachNewSharedBlock(slot));
  const int rows = static_cast<int>(source.size());
  SLOTSERVE_RETURN_IF_ERROR(scratch_.Reserve(rows, 0));
  std::vector<int32_t> embed_positions(rows);
  for (int i = 0; i < rows; ++i) embed_positions[i] = i + config_.decoder.position_offset;
  const size_t index_bytes = static_cast<size_t>(rows) * sizeof(int32_t);
  kernels::CopyHostToDevice(backend_, scratch_.tokens(), source.data(), index_bytes);
  kernels::CopyHostToDevice(backend_, scratch_.embed_positions(), embed_positions.data(),
                            index_bytes);
  RunEncoder(rows);
  // The source length lives in the cross memory block, so every reader knows what it holds.
  const float length = static_cast<float>(rows);
  float* block_base =
      states.shared_data() + static_cast<int64_t>(block) * states.floats_per_shared_block();
  kernels::CopyHostToDevice(backend_, block_base + layout_.source_length_offset, &length,
                            sizeof(float));
  for (int layer = 0; layer < config_.decoder.n_layers; ++layer) {
    BuildCrossMemory(states, block, layer, rows);
  }
  kernels::Synchronize(backend_);
  return absl::OkStatus();
}

void Seq2seqModel::RunEncoder(int rows) {
  const ModelConfig& config = config_.decoder;
  const int width = config.d_model;
  const kernels::Stream stream = nullptr;
  EmbedTokens(backend_, stream, config, tok_embed_, scratch_, rows);
  const int projection_width = scratch_.widths().projections;
  for (const BlockWeights& block : encoder_.blocks) {
    RunNormedLinear(backend_, stream, block.attn_norm, config.norm_eps, scratch_.hidden(),
                    scratch_.normed(), block.input_projection, rows, scratch_.projections(),
                    projection_width);
    kernels::BidirectionalAttentionParams attention;
    attention.rows = rows;
    attention.heads = config.n_heads;
    attention.head_dim = config.head_dim();
    attention.q = scratch_.projections();
    attention.k = scratch_.projections() + width;
    attention.v = scratch_.projections() + 2 * width;
    attention.in_stride = projection_width;
    attention.out = scratch_.attention();
    attention.out_stride = width;
    kernels::LaunchBidirectionalAttention(backend_, attention, stream);
    RunLinear(backend_, stream, block.o_proj, scratch_.attention(), width, rows, scratch_.hidden(),
              width, /*accumulate=*/true);
    RunFeedForward(backend_, stream, config, block, scratch_, rows);
  }
  RunLayerNorm(backend_, stream, encoder_.final_norm, config.norm_eps, scratch_.hidden(),
               source_.as<float>(), rows, width);
}

void Seq2seqModel::BuildCrossMemory(StateArena& states, int block, int layer, int positions) {
  const ModelConfig& config = config_.decoder;
  const CrossAttentionWeights& weights = cross_[layer];
  const int width = config.d_model;
  const kernels::Stream stream = nullptr;
  float* memory = states.shared_data() +
                  static_cast<int64_t>(block) * states.floats_per_shared_block() +
                  layout_.CrossLayerOffset(layer);
  // K and V side by side: [positions, 2E], K in columns [0, E), V in [E, 2E).
  float* kv = source_kv_.as<float>();
  RunLinear(backend_, stream, weights.kv_proj, source_.as<float>(), width, positions, kv, 2 * width,
            /*accumulate=*/false);
  CrossMemoryBuild build;
  build.backend = backend_;
  build.stream = stream;
  build.config = &config_;
  build.weights = &weights;
  build.positions = positions;
  build.source = source_.as<float>();
  build.kv = kv;
  build.memory = memory;
  build.memory_target.state = {.pool = states.shared_data(),
                               .slot_stride = states.floats_per_shared_block(),
                               .layer_offset = layout_.CrossLayerOffset(layer)};
  build.memory_target.slot = block;
  build.memory_target.start_position = 0;
  build.slot_logits = slot_logits_.as<float>();
  build.filtered_kv = filtered_kv_.as<float>();
  build.discarded = discarded_.as<float>();
  DescribeCrossAttentionKind(config_.cross.kind).build_memory(build);
}

}  // namespace slotserve::models
