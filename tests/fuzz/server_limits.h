// The request limits of a server with the bundled model's tokenizer and default flags, for the
// fuzz targets that run requests through the engine's validation.
#pragma once

#include "engine/request_validation.h"
#include "tests/fuzz/bundled_tokenizer.h"

namespace slotserve::fuzz {

inline engine::RequestLimits ServerLimits() {
  engine::RequestLimits limits;
  limits.vocab_size = BundledTokenizer()->piece_count();
  limits.max_positions = 1 << 30;
  limits.max_prompt_tokens = 8192;
  limits.default_max_new_tokens = 128;
  limits.max_new_tokens_limit = 4096;
  limits.max_stop_sequences = 16;
  limits.max_stop_sequence_bytes = 256;
  limits.max_top_logprobs = 20;
  limits.max_n = 8;
  limits.max_beam_width = 8;
  limits.has_tokenizer = true;
  return limits;
}

}  // namespace slotserve::fuzz
