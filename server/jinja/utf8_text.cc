#include "server/jinja/utf8_text.h"

#include <clocale>
#include <cwctype>

namespace slotserve::server::jinja {
namespace {

size_t SequenceLength(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 1;
}

// The C.UTF-8 locale's tables, whatever the process's locale is.
locale_t UnicodeLocale() {
  static const locale_t locale = [] {
    locale_t l = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
    return l != static_cast<locale_t>(nullptr) ? l : newlocale(LC_CTYPE_MASK, "C", nullptr);
  }();
  return locale;
}

uint32_t Upper(uint32_t c) {
  return static_cast<uint32_t>(towupper_l(static_cast<wint_t>(c), UnicodeLocale()));
}
uint32_t Lower(uint32_t c) {
  return static_cast<uint32_t>(towlower_l(static_cast<wint_t>(c), UnicodeLocale()));
}
bool IsCased(uint32_t c) { return Upper(c) != c || Lower(c) != c; }

}  // namespace

std::vector<std::string> SplitCodePoints(std::string_view text) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    size_t length = SequenceLength(static_cast<unsigned char>(text[i]));
    if (i + length > text.size()) length = 1;
    out.emplace_back(text.substr(i, length));
    i += length;
  }
  return out;
}

size_t CodePointCount(std::string_view text) {
  size_t count = 0;
  for (const char c : text) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++count;
  }
  return count;
}

uint32_t DecodeCodePoint(std::string_view text, size_t& i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  size_t extra = SequenceLength(lead) - 1;
  if (i + extra >= text.size()) return lead;
  uint32_t code = extra == 0   ? lead
                  : extra == 1 ? lead & 0x1F
                  : extra == 2 ? lead & 0x0F
                               : lead & 0x07;
  for (; extra > 0; --extra) code = (code << 6) | (static_cast<unsigned char>(text[++i]) & 0x3F);
  return code;
}

void AppendUtf8(uint32_t code_point, std::string& out) {
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    out += static_cast<char>(0xC0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    out += static_cast<char>(0xE0 | (code_point >> 12));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code_point >> 18));
    out += static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  }
}

std::string ChangeCase(std::string_view text, CaseChange change) {
  std::string out;
  out.reserve(text.size());
  bool word_start = true;
  bool first = true;
  for (size_t i = 0; i < text.size(); ++i) {
    const uint32_t c = DecodeCodePoint(text, i);
    uint32_t mapped = c;
    switch (change) {
      case CaseChange::kUpper:
        mapped = Upper(c);
        break;
      case CaseChange::kLower:
        mapped = Lower(c);
        break;
      case CaseChange::kCapitalize:
        mapped = first ? Upper(c) : Lower(c);
        break;
      case CaseChange::kTitle:
        mapped = word_start ? Upper(c) : Lower(c);
        word_start = !IsCased(c);
        break;
    }
    first = false;
    AppendUtf8(mapped, out);
  }
  return out;
}

bool AllCased(std::string_view text, bool upper) {
  bool any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const uint32_t c = DecodeCodePoint(text, i);
    if (!IsCased(c)) continue;
    any = true;
    if ((upper ? Upper(c) : Lower(c)) != c) return false;
  }
  return any;
}

}  // namespace slotserve::server::jinja
