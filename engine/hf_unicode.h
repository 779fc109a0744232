// The Unicode facts the Hugging Face tokenizer pipeline needs, from ICU: general categories
// (the \p{L} / \p{N} of the pre-tokenizers' regexes), White_Space (their \s), NFC / NFKC,
// and code points with the byte offsets they start at.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace slotserve::engine::hf {

struct CodePoint {
  char32_t value;
  uint32_t offset;  // byte offset in the text
};

// `text` must be valid UTF-8 (callers check first). Ends with a sentinel {0, text.size()}.
std::vector<CodePoint> DecodeCodePoints(std::string_view text);
void AppendUtf8(char32_t code_point, std::string* out);

bool IsLetter(char32_t c);      // \p{L}
bool IsNumber(char32_t c);      // \p{N}
bool IsWhitespace(char32_t c);  // \s: Unicode White_Space

enum class NormalForm { kNfc, kNfkc };
std::string Normalize(std::string_view text, NormalForm form);

}  // namespace slotserve::engine::hf
