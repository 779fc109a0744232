// GPT-2's byte-level alphabet, as tokenizer.json's ByteLevel pre-tokenizer and decoder use
// it: each of the 256 byte values stands for one printable code point (printable Latin-1 for
// itself, the others for U+0100 upwards in order), so any byte string is a string of
// vocabulary characters.
#pragma once

#include <string>
#include <string_view>

namespace slotserve::engine::hf {

// Each byte of `bytes` as its alphabet character (UTF-8), appended to *out.
void AppendByteLevelChars(std::string_view bytes, std::string* out);
// The inverse: each alphabet character of `text` as its byte; characters outside the
// alphabet (added tokens in other scripts) are kept as they are.
std::string ByteLevelCharsToBytes(std::string_view text);

}  // namespace slotserve::engine::hf
