// Byte-fallback pieces, "<0xE2>": the one parser of their spelling, shared by the
// SentencePiece and tokenizer.json tokenizers.
#pragma once

#include <string_view>

namespace slotserve::engine {

// "<0xE2>" -> 0xE2 (either case of hex digit); -1 when the piece is not of that form.
int ParseBytePiece(std::string_view piece);

}  // namespace slotserve::engine
