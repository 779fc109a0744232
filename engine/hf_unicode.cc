#include "engine/hf_unicode.h"

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

namespace slotserve::engine::hf {

std::vector<CodePoint> DecodeCodePoints(std::string_view text) {
  std::vector<CodePoint> out;
  out.reserve(text.size() + 1);
  size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const size_t length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    char32_t value = length == 1   ? lead
                     : length == 2 ? lead & 0x1F
                     : length == 3 ? lead & 0x0F
                                   : lead & 0x07;
    for (size_t k = 1; k < length && i + k < text.size(); ++k) {
      value = (value << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    }
    out.push_back({value, static_cast<uint32_t>(i)});
    i += length;
  }
  out.push_back({0, static_cast<uint32_t>(text.size())});
  return out;
}

void AppendUtf8(char32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

bool IsLetter(char32_t c) {
  if (c < 0x80) return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
  return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_L_MASK) != 0;
}

bool IsNumber(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_N_MASK) != 0;
}

bool IsWhitespace(char32_t c) {
  if (c < 0x80) return c == ' ' || (c >= '\t' && c <= '\r');
  return u_isUWhiteSpace(static_cast<UChar32>(c));
}

std::string Normalize(std::string_view text, NormalForm form) {
  bool ascii = true;
  for (char c : text) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  if (ascii) return std::string(text);  // ASCII is in every normal form
  UErrorCode error = U_ZERO_ERROR;
  const icu::Normalizer2* normalizer = form == NormalForm::kNfc
                                           ? icu::Normalizer2::getNFCInstance(error)
                                           : icu::Normalizer2::getNFKCInstance(error);
  if (U_FAILURE(error)) return std::string(text);
  const icu::UnicodeString normalized = normalizer->normalize(
      icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(), text.size())), error);
  std::string out;
  if (U_FAILURE(error)) return std::string(text);
  normalized.toUTF8String(out);
  return out;
}

}  // namespace slotserve::engine::hf
