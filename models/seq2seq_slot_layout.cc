#include "models/seq2seq_slot_layout.h"

#include "models/attention_kind.h"
#include "models/cross_attention_kind.h"

namespace slotserve::models {

int64_t CrossMemoryFloatsPerLayer(const Seq2seqConfig& config) {
  return DescribeCrossAttentionKind(config.cross.kind).memory_floats_per_layer(config);
}

Seq2seqSlotLayout MakeSeq2seqSlotLayout(const Seq2seqConfig& config) {
  Seq2seqSlotLayout layout;
  layout.decoder_state_floats =
      StateBytesPerRequest(config.decoder) / static_cast<int64_t>(sizeof(float));
  layout.raf_offset = layout.decoder_state_floats;
  const CrossAttentionKindDescription& kind = DescribeCrossAttentionKind(config.cross.kind);
  if (kind.hypothesis_floats_per_layer != nullptr) {
    layout.raf_floats_per_layer = kind.hypothesis_floats_per_layer(config);
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
