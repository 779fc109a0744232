// Where an encoder–decoder request's state lives (docs/ARCHITECTURE.md "Encoder–decoder models").
// It has two parts:
//
//   the slot, one per hypothesis (a beam's or a choice's own, forked by copy):
//     [ decoder self-attention state, all decoder layers (as for a decoder-only model) ]
//     [ srformer only: the RAF state of decoder layer 0 ] … [ of layer Ld-1 ]
//   the cross memory, one per request (a block of the arena's shared blocks, written once by
//   Encode and read by every slot of the request):
//     [ source length n, one float ]
//     [ cross memory of decoder layer 0 ] … [ cross memory of decoder layer Ld-1 ]
//
// Each layer's cross memory has its kind's kernel layout: softmax K, V [N x E] each (N =
// max_source_tokens, n rows in use: memory_attention.h); abc K̄, V̄ [M x E] and luna K̂, V̂
// [L x E] (memory_attention.h); rfa S, z per head (rfa_attention.h's state layout, read by
// rfa_cross_read.h); srformer K, V, KᵀV, ‖K‖_F (srformer_cross.h), whose RAF membrane, output
// and segment entered change as a hypothesis decodes and so live in the slot. Save and Restore
// of a slot carry both parts (state_arena.h), so a snapshot is the whole request.
#pragma once

#include <cstdint>

#include "models/seq2seq_config.h"
#include "models/seq2seq_shape.h"

namespace slotserve::models {

struct Seq2seqSlotLayout {
  // The slot.
  int64_t decoder_state_floats = 0;  // the decoder-only layout's state, at the slot's start
  int64_t raf_offset = 0;            // floats from the slot's start to layer 0's RAF state
  int64_t raf_floats_per_layer = 0;  // 0 unless the cross kind is srformer
  // The cross memory block.
  int64_t source_length_offset = 0;  // floats from the block's start to n
  int64_t cross_offset = 0;          // floats from the block's start to layer 0's cross memory
  int64_t cross_floats_per_layer = 0;
  int decoder_layers = 0;

  int64_t RafLayerOffset(int layer) const { return raf_offset + layer * raf_floats_per_layer; }
  int64_t slot_floats() const { return RafLayerOffset(decoder_layers); }
  int64_t CrossLayerOffset(int layer) const {
    return cross_offset + layer * cross_floats_per_layer;
  }
  int64_t memory_floats() const { return CrossLayerOffset(decoder_layers); }
  // What one request holds with one hypothesis.
  int64_t request_floats() const { return slot_floats() + memory_floats(); }
};

// Floats of one decoder layer's cross memory for one request (the shared part).
int64_t CrossMemoryFloatsPerLayer(const Seq2seqConfig& config);

Seq2seqSlotLayout MakeSeq2seqSlotLayout(const Seq2seqConfig& config);

// The shape the engine and the server see (LanguageModel::seq2seq()): the byte counts are the
// slot layout's (fp32 state).
Seq2seqShape MakeSeq2seqShape(const Seq2seqConfig& config);

}  // namespace slotserve::models
