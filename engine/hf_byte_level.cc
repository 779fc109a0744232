#include "engine/hf_byte_level.h"

#include <array>

#include "engine/hf_unicode.h"

namespace slotserve::engine::hf {
namespace {

struct Alphabet {
  std::array<char32_t, 256> char_of_byte{};
  std::array<int, 324> byte_of_char{};  // indexed by code point; -1: not in the alphabet

  Alphabet() {
    byte_of_char.fill(-1);
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      char_of_byte[b] = printable ? static_cast<char32_t>(b) : next++;
      byte_of_char[char_of_byte[b]] = b;
    }
  }
};

const Alphabet& TheAlphabet() {
  static const Alphabet alphabet;
  return alphabet;
}

}  // namespace

void AppendByteLevelChars(std::string_view bytes, std::string* out) {
  const Alphabet& alphabet = TheAlphabet();
  for (char c : bytes) AppendUtf8(alphabet.char_of_byte[static_cast<unsigned char>(c)], out);
}

std::string ByteLevelCharsToBytes(std::string_view text) {
  const Alphabet& alphabet = TheAlphabet();
  std::string out;
  const std::vector<CodePoint> chars = DecodeCodePoints(text);
  for (size_t i = 0; i + 1 < chars.size(); ++i) {
    const char32_t c = chars[i].value;
    if (c < alphabet.byte_of_char.size() && alphabet.byte_of_char[c] >= 0) {
      out.push_back(static_cast<char>(alphabet.byte_of_char[c]));
    } else {
      out.append(text.substr(chars[i].offset, chars[i + 1].offset - chars[i].offset));
    }
  }
  return out;
}

}  // namespace slotserve::engine::hf
