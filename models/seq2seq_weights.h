// The tensors an encoder–decoder model directory's model.safetensors must hold
// (docs/ARCHITECTURE.md "Encoder–decoder models"), and the check that it holds exactly those.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "models/model_weights.h"
#include "models/safetensors_file.h"
#include "models/seq2seq_config.h"

namespace slotserve::models {

// Every tensor, in a stable order: tok_embed, encoder blocks (softmax attention), the
// encoder's final norm, decoder blocks (self-attention by the decoder's kind, then cross_norm
// and the cross attention's tensors), the decoder's final norm, lm_head unless tied.
std::vector<ExpectedTensor> ExpectedSeq2seqTensors(const Seq2seqConfig& config);

// The tensors of one decoder layer's cross attention, named relative to "cross.": q, k, v, o
// projections and the kind's own (slot_proj; rfa_random, rfa_sigma; luna_p, pq_proj and a conv
// filter; raf_proj, raf_leak, raf_thre).
std::vector<ExpectedTensor> CrossAttentionTensors(const Seq2seqConfig& config);

// Refuses, by name, the first missing tensor, tensor of the wrong shape, or tensor the config
// has no use for.
absl::Status CheckSeq2seqWeights(const Seq2seqConfig& config, const SafetensorsFile& file);

// "encoder.layers.3.", "decoder.layers.0."
std::string EncoderLayerPrefix(int layer);
std::string DecoderLayerPrefix(int layer);

}  // namespace slotserve::models
