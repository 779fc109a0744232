// Seq2seqModel::Encode: the encoder over a request's source (bidirectional softmax blocks, then
// encoder.final_norm) and, from its output X, each decoder layer's cross memory in a fresh
// cross memory block the slot reads (shared with the slots later forked from it).
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kernels/bidirectional_attention.h"
#include "kernels/memory_attention.h"
#include "kernels/rfa_attention.h"
#include "kernels/softmax_pooling.h"
#include "kernels/source_filter.h"
#include "kernels/srformer_cross.h"
#include "models/block_ops.h"
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

namespace {

// The softmax_pooling launch shared by abc (logits given) and luna (packing queries): K and V
// side by side in `kv` ([positions, 2E]), the memory rows written to the layer's K̄/V̄ blocks.
kernels::SoftmaxPoolingParams PoolingInto(float* memory, int memory_rows, const float* kv,
                                          int positions, int heads, int head_dim) {
  const int64_t width = static_cast<int64_t>(heads) * head_dim;
  kernels::SoftmaxPoolingParams pooling;
  pooling.positions = positions;
  pooling.heads = heads;
  pooling.head_dim = head_dim;
  pooling.memory_rows = memory_rows;
  pooling.keys = kv;
  pooling.values = kv + width;
  pooling.in_stride = 2 * width;
  pooling.out_keys = memory;
  pooling.out_values = memory + memory_rows * width;
  return pooling;
}

}  // namespace

void Seq2seqModel::BuildCrossMemory(StateArena& states, int block, int layer, int positions) {
  const ModelConfig& config = config_.decoder;
  const CrossAttentionWeights& weights = cross_[layer];
  const int width = config.d_model;
  const int heads = config.n_heads;
  const int head_dim = config.head_dim();
  const kernels::Stream stream = nullptr;
  float* memory = states.shared_data() +
                  static_cast<int64_t>(block) * states.floats_per_shared_block() +
                  layout_.CrossLayerOffset(layer);
  // K and V side by side: [positions, 2E], K in columns [0, E), V in [E, 2E).
  float* kv = source_kv_.as<float>();
  RunLinear(backend_, stream, weights.kv_proj, source_.as<float>(), width, positions, kv, 2 * width,
            /*accumulate=*/false);
  switch (config_.cross.kind) {
    case CrossAttentionKind::kSoftmax: {
      // memory_attention's layout: K [N, E] then V [N, E], the first `positions` rows in use:
      // the K and V halves of the [positions, 2E] projection, one strided copy each.
      const int64_t capacity = config_.max_source_tokens;
      const size_t row_bytes = static_cast<size_t>(width) * sizeof(float);
      kernels::CopyDeviceToDevice2D(backend_, memory, row_bytes, kv, 2 * row_bytes, row_bytes,
                                    positions, stream);
      kernels::CopyDeviceToDevice2D(backend_, memory + capacity * width, row_bytes, kv + width,
                                    2 * row_bytes, row_bytes, positions, stream);
      break;
    }
    case CrossAttentionKind::kAbc: {
      const int rows = config_.cross.memory_rows;
      float* logits = slot_logits_.as<float>();
      RunLinear(backend_, stream, weights.slot_proj, source_.as<float>(), width, positions, logits,
                static_cast<int64_t>(heads) * rows, /*accumulate=*/false);
      kernels::SoftmaxPoolingParams pooling =
          PoolingInto(memory, rows, kv, positions, heads, head_dim);
      pooling.logits = logits;
      pooling.logits_stride = static_cast<int64_t>(heads) * rows;
      kernels::LaunchSoftmaxPooling(backend_, pooling, stream);
      break;
    }
    case CrossAttentionKind::kLuna: {
      const float* keys = kv;
      int filtered_positions = positions;
      if (config_.cross.has_filter) {
        kernels::SourceFilterParams filter;
        filter.positions = positions;
        filter.columns = 2 * width;
        filter.kernel = config_.cross.filter.kernel;
        filter.stride = config_.cross.filter.stride;
        filter.maxpool = config_.cross.filter.maxpool;
        filter.weight = weights.filter_weight.as<float>();
        filter.bias = weights.filter_bias.as<float>();
        filter.in = kv;
        filter.in_stride = 2 * width;
        filter.out = filtered_kv_.as<float>();
        filter.out_stride = 2 * width;
        kernels::LaunchSourceFilter(backend_, filter, stream);
        keys = filtered_kv_.as<float>();
        filtered_positions = kernels::FilteredRows(positions, filter.stride);
      }
      const int rows = config_.cross.length;
      kernels::SoftmaxPoolingParams pooling =
          PoolingInto(memory, rows, keys, filtered_positions, heads, head_dim);
      pooling.queries = weights.packing_queries.as<float>();
      pooling.logit_scale = static_cast<float>(
          1.0 / (std::sqrt(static_cast<double>(head_dim)) * config_.cross.temperature));
      kernels::LaunchSoftmaxPooling(backend_, pooling, stream);
      break;
    }
    case CrossAttentionKind::kRfa: {
      // rfa_attention's ungated prefill from the empty (zeroed: a fresh block) layer sums
      // φ(K_i)⊗V_i and φ(K_i) over the source; its per-token output is not needed.
      kernels::RfaParams rfa;
      rfa.rows = positions;
      rfa.heads = heads;
      rfa.head_dim = head_dim;
      rfa.features = config_.cross.features;
      rfa.q = kv;
      rfa.k = kv;
      rfa.v = kv + width;
      rfa.in_stride = 2 * width;
      rfa.projection = weights.rfa_projection.as<float>();
      rfa.feature_scale = config_.cross.feature_scale;
      rfa.eps = config_.cross.eps;
      rfa.norm_eps = config_.cross.norm_eps;
      rfa.interleave = config_.cross.interleave;
      rfa.out = discarded_.as<float>();
      rfa.out_stride = width;
      kernels::PrefillTarget target;
      target.state = {.pool = states.shared_data(),
                      .slot_stride = states.floats_per_shared_block(),
                      .layer_offset = layout_.CrossLayerOffset(layer)};
      target.slot = block;
      target.start_position = 0;
      kernels::LaunchRfaPrefill(backend_, rfa, target, stream);
      break;
    }
    case CrossAttentionKind::kSrformer: {
      kernels::SrformerBuildParams build;
      build.layout = {heads, head_dim, config_.max_source_tokens};
      build.positions = positions;
      build.keys = kv;
      build.values = kv + width;
      build.in_stride = 2 * width;
      build.layer = memory;
      kernels::LaunchSrformerBuild(backend_, build, stream);
      break;
    }
  }
}

}  // namespace slotserve::models
