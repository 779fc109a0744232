// Seq2seqModel's cross-attention sub-block (docs/ARCHITECTURE.md "Encoder–decoder models"): h +=
// cross.o(cross(cross_norm h, X)), where the read of X is the request's cross memory block. Every
// row names its slot, block and position in scratch (a prefill's rows all name the same slot), so
// one launch serves a prefill and a decode step alike; the read itself is the cross kind's
// (models/cross_attention_kind.h).
#include "models/block_ops.h"
#include "models/cross_attention_kind.h"
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
  CrossMemoryRead read;
  read.backend = backend_;
  read.stream = stream;
  read.config = &config_;
  read.weights = &weights;
  read.rows = rows;
  read.prefill = prefill;
  read.queries = queries;
  read.out = out;
  read.target = target;
  read.length_offset = layout_.source_length_offset;
  read.hypothesis_state = {.pool = states.device_data(),
                           .slot_stride = states.floats_per_slot(),
                           .layer_offset = layout_.RafLayerOffset(layer)};
  read.hypothesis_slots = scratch_.slots();
  DescribeCrossAttentionKind(config_.cross.kind).read_memory(read);
  RunLinear(backend_, stream, weights.o_proj, out, width, rows, scratch_.hidden(), width,
            /*accumulate=*/true);
}

}  // namespace slotserve::models
