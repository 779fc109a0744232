// What an encoder–decoder model (docs/ARCHITECTURE.md "Encoder–decoder models") adds to a
// LanguageModel, as the engine and the server need to know it: the source limit, the decoder's
// first token, the cross attention's kind and the two parts of a request's state. A decoder-only
// model has none (LanguageModel::seq2seq() is null).
#pragma once

#include <cstdint>
#include <string>

namespace slotserve::models {

struct Seq2seqShape {
  // The longest source Encode accepts (encoder.max_source_tokens).
  int32_t max_source_tokens = 0;
  // The decoder's first input, at position 0, before the target tokens.
  int32_t decoder_start_id = 0;
  // "softmax", "abc", "rfa", "luna" or "srformer".
  std::string cross_kind;
  // state_bytes_per_request() = decoder_state_bytes + cross_memory_bytes: what each
  // hypothesis holds in its own slot (the decoder's self-attention state; for srformer also
  // the RAF state of its cross attention), and the cross memory Encode writes once per request
  // and the request's beams and choices share (fixed for abc/rfa/luna, sized by
  // max_source_tokens for softmax/srformer). A beam of width B holds
  // B * decoder_state_bytes + cross_memory_bytes.
  int64_t decoder_state_bytes = 0;
  int64_t cross_memory_bytes = 0;
};

}  // namespace slotserve::models
