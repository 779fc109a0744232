#include "base/utf8.h"

namespace slotserve::base {
namespace {

constexpr char kReplacementCharacter[] = "\xEF\xBF\xBD";  // U+FFFD

bool IsContinuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

// Expected length of the character that starts with `lead`, 0 when `lead` cannot start one.
int SequenceLength(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

// Whether the second byte is allowed after `lead` (excludes overlongs, surrogates and
// code points above U+10FFFF, per RFC 3629).
bool SecondByteValid(unsigned char lead, unsigned char second) {
  if (!IsContinuation(second)) return false;
  if (lead == 0xE0) return second >= 0xA0;
  if (lead == 0xED) return second <= 0x9F;
  if (lead == 0xF0) return second >= 0x90;
  if (lead == 0xF4) return second <= 0x8F;
  return true;
}

}  // namespace

size_t AppendCompleteUtf8(std::string_view bytes, bool at_end, std::string* out) {
  size_t i = 0;
  while (i < bytes.size()) {
    const auto lead = static_cast<unsigned char>(bytes[i]);
    const int length = SequenceLength(lead);
    if (length == 0) {
      out->append(kReplacementCharacter);
      ++i;
      continue;
    }
    // Check the bytes that are there; stop (hold back) if the character is cut short.
    int valid = 1;
    while (valid < length && i + valid < bytes.size()) {
      const auto byte = static_cast<unsigned char>(bytes[i + valid]);
      const bool ok = valid == 1 ? SecondByteValid(lead, byte) : IsContinuation(byte);
      if (!ok) break;
      ++valid;
    }
    if (valid == length) {
      out->append(bytes.substr(i, length));
      i += length;
    } else if (i + valid == bytes.size() && !at_end) {
      break;  // a valid start of a character whose remaining bytes have not arrived yet
    } else {
      out->append(kReplacementCharacter);  // broken character: one U+FFFD per bad byte
      ++i;
    }
  }
  return i;
}

size_t FirstInvalidUtf8Byte(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const int length = SequenceLength(lead);
    if (length == 0 || text.size() - i < static_cast<size_t>(length)) return i;
    if (length > 1 && !SecondByteValid(lead, static_cast<unsigned char>(text[i + 1]))) return i;
    for (int c = 2; c < length; ++c) {
      if (!IsContinuation(static_cast<unsigned char>(text[i + c]))) return i;
    }
    i += length;
  }
  return std::string_view::npos;
}

bool IsValidUtf8(std::string_view text) {
  return FirstInvalidUtf8Byte(text) == std::string_view::npos;
}

}  // namespace slotserve::base
