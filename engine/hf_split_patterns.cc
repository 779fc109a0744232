#include "engine/hf_split_patterns.h"

#include "engine/hf_unicode.h"

namespace slotserve::engine::hf {
namespace {

constexpr std::string_view kGpt2Regex =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr std::string_view kLlama3Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// The code points of one text with the class tests the patterns use.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : chars_(DecodeCodePoints(text)) {}

  size_t size() const { return chars_.size() - 1; }
  char32_t at(size_t i) const { return i < size() ? chars_[i].value : 0; }
  size_t offset(size_t i) const { return chars_[i].offset; }
  bool letter(size_t i) const { return i < size() && IsLetter(chars_[i].value); }
  bool number(size_t i) const { return i < size() && IsNumber(chars_[i].value); }
  bool space(size_t i) const { return i < size() && IsWhitespace(chars_[i].value); }
  // [^\s\p{L}\p{N}]
  bool other(size_t i) const { return i < size() && !space(i) && !letter(i) && !number(i); }
  bool newline(size_t i) const { return at(i) == '\r' || at(i) == '\n'; }

  template <typename Predicate>
  size_t RunEnd(size_t i, Predicate predicate) const {
    while (i < size() && predicate(i)) ++i;
    return i;
  }

  // The contraction 's 't 're 've 'm 'll 'd at i (case-insensitively when asked): its end,
  // or i.
  size_t Contraction(size_t i, bool ignore_case) const {
    if (at(i) != '\'') return i;
    auto is = [&](size_t k, char lower) {
      const char32_t c = at(k);
      return c == static_cast<char32_t>(lower) ||
             (ignore_case && c == static_cast<char32_t>(lower - 'a' + 'A'));
    };
    if (is(i + 1, 's') || is(i + 1, 't') || is(i + 1, 'm') || is(i + 1, 'd')) return i + 2;
    if ((is(i + 1, 'r') || is(i + 1, 'v')) && is(i + 2, 'e')) return i + 3;
    if (is(i + 1, 'l') && is(i + 2, 'l')) return i + 3;
    return i;
  }

  // \s+(?!\S)|\s+ at a whitespace character i.
  size_t Whitespace(size_t i) const {
    const size_t end = RunEnd(i, [&](size_t k) { return space(k); });
    if (end == size() || end - i == 1) return end;
    return end - 1;  // leave the last space to the word after it
  }

 private:
  std::vector<CodePoint> chars_;
};

size_t MatchGpt2(const Scanner& s, size_t i) {
  if (size_t end = s.Contraction(i, /*ignore_case=*/false); end != i) return end;
  const size_t after_space = s.at(i) == ' ' ? i + 1 : i;
  if (s.letter(after_space)) return s.RunEnd(after_space, [&](size_t k) { return s.letter(k); });
  if (s.number(after_space)) return s.RunEnd(after_space, [&](size_t k) { return s.number(k); });
  if (s.other(after_space)) return s.RunEnd(after_space, [&](size_t k) { return s.other(k); });
  return s.Whitespace(i);
}

size_t MatchLlama3(const Scanner& s, size_t i, size_t max_digits) {
  if (size_t end = s.Contraction(i, /*ignore_case=*/true); end != i) return end;
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (s.letter(i)) return s.RunEnd(i, [&](size_t k) { return s.letter(k); });
  if (!s.newline(i) && !s.number(i) && s.letter(i + 1)) {
    return s.RunEnd(i + 1, [&](size_t k) { return s.letter(k); });
  }
  // \p{N}{1,max}
  if (s.number(i)) {
    size_t end = i;
    while (end < s.size() && end - i < max_digits && s.number(end)) ++end;
    return end;
  }
  // ' '?[^\s\p{L}\p{N}]+[\r\n]*
  const size_t after_space = s.at(i) == ' ' ? i + 1 : i;
  if (s.other(after_space)) {
    const size_t end = s.RunEnd(after_space, [&](size_t k) { return s.other(k); });
    return s.RunEnd(end, [&](size_t k) { return s.newline(k); });
  }
  // \s*[\r\n]+ : through the last line break of the whitespace run.
  const size_t run_end = s.RunEnd(i, [&](size_t k) { return s.space(k); });
  for (size_t k = run_end; k > i; --k) {
    if (s.newline(k - 1)) return k;
  }
  return s.Whitespace(i);
}

}  // namespace

std::optional<SplitPattern> RecognizeSplitPattern(std::string_view regex) {
  if (regex == kGpt2Regex) return SplitPattern::kGpt2;
  if (regex == kLlama3Regex) return SplitPattern::kLlama3;
  if (regex == kQwen2Regex) return SplitPattern::kQwen2;
  return std::nullopt;
}

std::vector<std::pair<size_t, size_t>> FindSplitMatches(SplitPattern pattern,
                                                        std::string_view text) {
  const Scanner scanner(text);
  std::vector<std::pair<size_t, size_t>> matches;
  size_t i = 0;
  while (i < scanner.size()) {
    size_t end = pattern == SplitPattern::kGpt2     ? MatchGpt2(scanner, i)
                 : pattern == SplitPattern::kLlama3 ? MatchLlama3(scanner, i, 3)
                                                    : MatchLlama3(scanner, i, 1);
    if (end <= i) end = i + 1;  // unreachable with these patterns; never loop forever
    matches.emplace_back(scanner.offset(i), scanner.offset(end));
    i = end;
  }
  return matches;
}

}  // namespace slotserve::engine::hf
