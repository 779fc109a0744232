#include "models/seq2seq_slot_layout.h"

#include "kernels/memory_attention.h"
#include "kernels/rfa_attention.h"
#include "kernels/srformer_cross.h"
#include "models/attention_kind.h"

namespace slotserve::models {

int64_t CrossMemoryFloatsPerLayer(const Seq2seqConfig& config) {
  const int heads = config.decoder.n_heads;
  const int head_dim = config.decoder.head_dim();
  const CrossAttentionConfig& cross = config.cross;
  switch (cross.kind) {
    case CrossAttentionKind::kSoftmax:
      return kernels::MemoryAttentionFloatsPerLayer(heads, head_dim, config.max_source_tokens);
    case CrossAttentionKind::kAbc:
      return kernels::MemoryAttentionFloatsPerLayer(heads, head_dim, cross.memory_rows);
    case CrossAttentionKind::kLuna:
      return kernels::MemoryAttentionFloatsPerLayer(heads, head_dim, cross.length);
    case CrossAttentionKind::kRfa:
      return kernels::RfaStateFloatsPerLayer(heads, head_dim, cross.features);
    case CrossAttentionKind::kSrformer:
      return kernels::SrformerLayout{heads, head_dim, config.max_source_tokens}.memory_floats();
  }
  return 0;
}

Seq2seqSlotLayout MakeSeq2seqSlotLayout(const Seq2seqConfig& config) {
  Seq2seqSlotLayout layout;
  layout.decoder_state_floats =
      StateBytesPerRequest(config.decoder) / static_cast<int64_t>(sizeof(float));
  layout.raf_offset = layout.decoder_state_floats;
  if (config.cross.kind == CrossAttentionKind::kSrformer) {
    layout.raf_floats_per_layer =
        kernels::SrformerLayout{config.decoder.n_heads, config.decoder.head_dim(),
                                config.max_source_tokens}
            .raf_floats();
  }
  layout.source_length_offset = 0;
  layout.cross_offset = 1;
  layout.cross_floats_per_layer = CrossMemoryFloatsPerLayer(config);
  layout.decoder_layers = config.decoder.n_layers;
  return layout;
}

Seq2seqShape MakeSeq2seqShape(const Seq2seqConfig& config) {
  const Seq2seqSlotLayout layout = MakeSeq2seqSlotLayout(config);
  Seq2seqShape shape;
  shape.max_source_tokens = config.max_source_tokens;
  shape.decoder_start_id = config.decoder_start_id;
  shape.cross_kind = CrossAttentionKindName(config.cross.kind);
  shape.decoder_state_bytes = layout.slot_floats() * static_cast<int64_t>(sizeof(float));
  shape.cross_memory_bytes = layout.memory_floats() * static_cast<int64_t>(sizeof(float));
  return shape;
}

}  // namespace slotserve::models
