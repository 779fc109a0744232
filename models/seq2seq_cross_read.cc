// Seq2seqModel's cross-attention sub-block (DESIGN §8): h += cross.o(cross(cross_norm h, X)),
// where the read of X is the request's cross memory block. Every row names its slot, block and
// position in scratch (a prefill's rows all name the same slot), so one launch serves a prefill
// and a decode step alike, except srformer's prefill, whose rows update the same RAF state in
// turn and so run one at a time.
#include "kernels/memory_attention.h"
#include "kernels/rfa_attention.h"
#include "kernels/rfa_cross_read.h"
#include "kernels/srformer_cross.h"
#include "models/block_ops.h"
#include "models/seq2seq_model.h"

namespace slotserve::models {

void Seq2seqModel::RunCrossAttention(StateArena& states, int layer, int rows, bool prefill) {
  const ModelConfig& config = config_.decoder;
  const CrossAttentionWeights& weights = cross_[layer];
  const int width = config.d_model;
  const kernels::Stream stream = nullptr;
  float* queries = cross_queries_.as<float>();
  RunNormedLinear(backend_, stream, weights.cross_norm, config.norm_eps, scratch_.hidden(),
                  scratch_.normed(), weights.q_proj, rows, queries, width);
  // The kernels read the memory through a step target whose "slots" are the rows' cross
  // memory blocks (staged by StageCrossBlocks); srformer's RAF state is in the rows' own slots.
  kernels::StepTarget target;
  target.state = {.pool = states.shared_data(),
                  .slot_stride = states.floats_per_shared_block(),
                  .layer_offset = layout_.CrossLayerOffset(layer)};
  target.slots = cross_blocks_.as<int32_t>();
  target.positions = scratch_.positions();
  float* out = scratch_.attention();
  switch (config_.cross.kind) {
    case CrossAttentionKind::kSoftmax:
    case CrossAttentionKind::kAbc:
    case CrossAttentionKind::kLuna: {
      kernels::MemoryAttentionParams read;
      read.rows = rows;
      read.heads = config.n_heads;
      read.head_dim = config.head_dim();
      read.q = queries;
      read.q_stride = width;
      read.out = out;
      read.out_stride = width;
      if (config_.cross.kind == CrossAttentionKind::kSoftmax) {
        read.capacity = config_.max_source_tokens;
        read.length_offset = layout_.source_length_offset;
      } else {
        read.capacity = config_.cross.kind == CrossAttentionKind::kAbc ? config_.cross.memory_rows
                                                                       : config_.cross.length;
      }
      kernels::LaunchMemoryAttention(backend_, read, target, stream);
      break;
    }
    case CrossAttentionKind::kRfa: {
      kernels::RfaParams read;
      read.rows = rows;
      read.heads = config.n_heads;
      read.head_dim = config.head_dim();
      read.features = config_.cross.features;
      read.q = queries;
      read.in_stride = width;
      read.projection = weights.rfa_projection.as<float>();
      read.feature_scale = config_.cross.feature_scale;
      read.eps = config_.cross.eps;
      read.norm_eps = config_.cross.norm_eps;
      read.interleave = config_.cross.interleave;
      read.out = out;
      read.out_stride = width;
      kernels::LaunchRfaCrossRead(backend_, read, target, stream);
      break;
    }
    case CrossAttentionKind::kSrformer: {
      kernels::SrformerStepParams step;
      step.layout = {config.n_heads, config.head_dim(), config_.max_source_tokens};
      step.segment = config_.cross.segment;
      step.target_length = config_.cross.target_length;
      step.length_offset = layout_.source_length_offset;
      step.raf_state = {.pool = states.device_data(),
                        .slot_stride = states.floats_per_slot(),
                        .layer_offset = layout_.RafLayerOffset(layer)};
      step.raf_weight = weights.raf_weight.as<float>();
      step.raf_bias = weights.raf_bias.as<float>();
      step.leak = weights.raf_leak;
      step.threshold = weights.raf_threshold;
      step.q_stride = width;
      step.out_stride = width;
      const int launches = prefill ? rows : 1;
      step.rows = prefill ? 1 : rows;
      for (int r = 0; r < launches; ++r) {
        step.q = queries + static_cast<int64_t>(r) * width;
        step.out = out + static_cast<int64_t>(r) * width;
        kernels::StepTarget row_target = target;
        row_target.slots = target.slots + r;
        row_target.positions = target.positions + r;
        step.raf_slots = scratch_.slots() + r;
        kernels::LaunchSrformerStep(backend_, step, row_target, stream);
      }
      break;
    }
  }
  RunLinear(backend_, stream, weights.o_proj, out, width, rows, scratch_.hidden(), width,
            /*accumulate=*/true);
}

}  // namespace slotserve::models
