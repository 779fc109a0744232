// The few Unicode-aware string operations a template needs on UTF-8 text: Python counts, slices
// and walks a str by code point, not by byte, and changes case by Unicode's simple mappings.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace slotserve::server::jinja {

// Each code point of `text` as its own UTF-8 string (a byte that starts no valid sequence is
// taken alone, so nothing is lost).
std::vector<std::string> SplitCodePoints(std::string_view text);
size_t CodePointCount(std::string_view text);
// The code point at text[i], advancing i to its last byte.
uint32_t DecodeCodePoint(std::string_view text, size_t& i);
void AppendUtf8(uint32_t code_point, std::string& out);

enum class CaseChange { kUpper, kLower, kTitle, kCapitalize };
// str.upper(), lower(), title() and capitalize() with the C library's Unicode case tables
// (one-to-one mappings: "ß".upper() stays "ß", where Python writes "SS").
std::string ChangeCase(std::string_view text, CaseChange change);
// Whether the letters of `text` are all lower (upper) case, with at least one letter: jinja2's
// `is lower` / `is upper`.
bool AllCased(std::string_view text, bool upper);

}  // namespace slotserve::server::jinja
