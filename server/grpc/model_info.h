// The GetModelInfo answer: the model's shape and the live state-slot pool.
#pragma once

#include <string>

#include "engine/scheduler.h"
#include "models/seq2seq_shape.h"
#include "slotserve/v1/slotserve.pb.h"

namespace slotserve::server {

// Fills every field of v1::ModelInfo; `model_name` is the served name (--served-model-name, else
// the model directory's name).
// For an encoder-decoder model (docs/ARCHITECTURE.md "Encoder–decoder models") also the seq2seq
// fields (is_seq2seq ... decoder_start_id); n_layers and attention_kind then describe the decoder.
v1::ModelInfo DescribeModel(const engine::Scheduler& scheduler, const std::string& model_name);

// The start-up line's note on an encoder-decoder model's state: ", of which N decoder
// self-attention + M cross memory (<kind>, sources up to S tokens)"; empty for null
// (decoder-only).
std::string DescribeSeq2seqState(const models::Seq2seqShape* seq2seq);

}  // namespace slotserve::server
