// UTF-8 checks: streamed text (proto string fields must hold valid UTF-8, docs/ARCHITECTURE.md "A
// request's path"), request text and stop sequences, and JSON files read from a model directory.
// The one validator.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace slotserve::base {

// Appends the complete characters at the start of `bytes` to *out, each invalid byte as
// U+FFFD (as SentencePiece's decoder does), and returns how many bytes it consumed. A
// character cut short at the end but valid so far is left unconsumed unless `at_end`.
size_t AppendCompleteUtf8(std::string_view bytes, bool at_end, std::string* out);

// Whether `text` is well-formed UTF-8 (RFC 3629: no overlongs, surrogates or code points
// above U+10FFFF).
bool IsValidUtf8(std::string_view text);

// Offset of the first byte that does not start a well-formed character (as IsValidUtf8 judges
// it; a character cut short at the end counts), or std::string_view::npos when there is none.
size_t FirstInvalidUtf8Byte(std::string_view text);

}  // namespace slotserve::base
