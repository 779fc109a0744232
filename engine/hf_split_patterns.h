// The word-splitting regexes of byte-level tokenizers, hand-coded: tokenizer.json's Split
// pre-tokenizer carries a regex, but real files use one of a few patterns, and matching them
// directly is exact and fast where a general regex engine with \p{..}, possessive and
// lookahead support would be neither here. Any other pattern is refused at load by name.
//   GPT-2 (also ByteLevel's use_regex, GPT-NeoX):
//     's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//   Llama-3 (digits in runs of at most 3) and Qwen2/3 (single digits):
//     (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//     ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
#pragma once

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace slotserve::engine::hf {

enum class SplitPattern { kGpt2, kLlama3, kQwen2 };

// The known pattern `regex` spells, exactly; nullopt for any other.
std::optional<SplitPattern> RecognizeSplitPattern(std::string_view regex);

// The matches of `pattern` in `text` (valid UTF-8), as [begin, end) byte ranges. They cover
// the text without gaps, as each pattern matches at every position.
std::vector<std::pair<size_t, size_t>> FindSplitMatches(SplitPattern pattern,
                                                        std::string_view text);

}  // namespace slotserve::engine::hf
