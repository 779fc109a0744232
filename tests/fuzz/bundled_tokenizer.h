// The bundled model's SentencePiece tokenizer (4000 pieces, byte fallback), loaded once per
// fuzz process. SLOTSERVE_FUZZ_TOKENIZER is set by tests/fuzz/CMakeLists.txt.
#pragma once

#include "engine/tokenizer.h"

namespace slotserve::fuzz {

inline const engine::Tokenizer* BundledTokenizer() {
  static const engine::Tokenizer* tokenizer =
      engine::Tokenizer::Load(SLOTSERVE_FUZZ_TOKENIZER).value().release();
  return tokenizer;
}

}  // namespace slotserve::fuzz
