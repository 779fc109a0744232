#include "server/jinja/lexer.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

#include "server/jinja/utf8_text.h"
#include "server/jinja/value.h"

namespace slotserve::server::jinja {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

// jinja2 reads the template with "\r\n" and "\r" as "\n" and, keep_trailing_newline being off,
// without its one final newline.
std::string NormalizeSource(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out += source[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// Python's "unicode-escape" decoding, which jinja2 applies to a string literal's body.
std::string UnescapeStringLiteral(std::string_view body, int line) {
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\' || i + 1 == body.size()) {
      out += body[i];
      continue;
    }
    const char c = body[++i];
    switch (c) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case 'a':
        out += '\a';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'v':
        out += '\v';
        break;
      case '0':
        out += '\0';
        break;
      case '\\':
        out += '\\';
        break;
      case '\'':
        out += '\'';
        break;
      case '"':
        out += '"';
        break;
      case '\n':
        break;
      case 'x':
      case 'u':
      case 'U': {
        const size_t digits = c == 'x' ? 2 : c == 'u' ? 4 : 8;
        const std::string hex(body.substr(i + 1, digits));
        if (hex.size() != digits || !std::all_of(hex.begin(), hex.end(), [](char h) {
              return std::isxdigit(static_cast<unsigned char>(h)) != 0;
            })) {
          Raise("truncated \\" + std::string(1, c) + " escape in a string literal", line);
        }
        AppendUtf8(static_cast<uint32_t>(std::stoul(hex, nullptr, 16)), out);
        i += digits;
        break;
      }
      default:
        out += '\\';
        out += c;
    }
  }
  return out;
}

class Lexer {
 public:
  explicit Lexer(std::string source) : source_(std::move(source)) {}

  std::vector<Token> Run() {
    while (pos_ < source_.size()) {
      const size_t tag = FindTagStart(pos_);
      std::string text = source_.substr(pos_, tag - pos_);
      if (tag == source_.size()) {
        Emit(TokenKind::kText, std::move(text));
        break;
      }
      const char kind = source_[tag + 1];
      const char sign = tag + 2 < source_.size() ? source_[tag + 2] : '\0';
      if (sign == '-') {
        text.erase(std::find_if_not(text.rbegin(), text.rend(), IsSpace).base(), text.end());
      } else if (sign != '+' && kind != '{') {
        LStripBlock(text);
      }
      Emit(TokenKind::kText, text);
      line_ += std::count(source_.begin() + pos_, source_.begin() + tag, '\n');
      pos_ = tag + 2 + (sign == '-' || sign == '+' ? 1 : 0);
      if (kind == '#') {
        LexComment();
      } else if (kind == '%' && TryRawBlock()) {
      } else {
        LexTag(kind == '{' ? TokenKind::kVariableBegin : TokenKind::kBlockBegin);
      }
    }
    tokens_.push_back({TokenKind::kEnd, "", line_});
    return std::move(tokens_);
  }

 private:
  size_t FindTagStart(size_t from) const {
    for (size_t i = from; i + 1 < source_.size(); ++i) {
      if (source_[i] == '{' &&
          (source_[i + 1] == '{' || source_[i + 1] == '%' || source_[i + 1] == '#')) {
        return i;
      }
    }
    return source_.size();
  }

  // lstrip_blocks: spaces and tabs between the start of a line and a block or comment tag go.
  void LStripBlock(std::string& text) const {
    const size_t newline = text.rfind('\n');
    const size_t line_start = newline == std::string::npos ? 0 : newline + 1;
    if (line_start == 0 && !line_starting_) return;
    if (line_start < text.size() && std::all_of(text.begin() + line_start, text.end(), IsSpace)) {
      text.erase(line_start);
    }
  }

  void Emit(TokenKind kind, std::string text) {
    if (kind == TokenKind::kText && text.empty()) return;
    tokens_.push_back({kind, std::move(text), line_});
  }

  // After a tag's end: "-" strips all whitespace that follows, trim_blocks one newline after a
  // block or comment tag. Records whether the next text starts a line (for lstrip_blocks).
  void AfterTagEnd(char sign, bool is_block) {
    const size_t start = pos_;
    if (sign == '-') {
      while (pos_ < source_.size() && IsSpace(source_[pos_])) ++pos_;
    } else if (sign != '+' && is_block && pos_ < source_.size() && source_[pos_] == '\n') {
      ++pos_;
    }
    line_ += std::count(source_.begin() + start, source_.begin() + pos_, '\n');
    line_starting_ = pos_ > 0 && source_[pos_ - 1] == '\n';
  }

  void LexComment() {
    const size_t end = source_.find("#}", pos_);
    if (end == std::string::npos) Raise("missing end of comment tag", line_);
    const char sign = end > pos_ ? source_[end - 1] : '\0';
    line_ += std::count(source_.begin() + pos_, source_.begin() + end, '\n');
    pos_ = end + 2;
    AfterTagEnd(sign, /*is_block=*/true);
  }

  // {% raw %}...{% endraw %}: the text between, untouched.
  bool TryRawBlock() {
    size_t p = pos_;
    while (p < source_.size() && IsSpace(source_[p])) ++p;
    if (source_.compare(p, 3, "raw") != 0) return false;
    p += 3;
    while (p < source_.size() && IsSpace(source_[p])) ++p;
    char sign = '\0';
    if (p < source_.size() && source_[p] == '-') sign = source_[p++];
    if (source_.compare(p, 2, "%}") != 0) return false;
    pos_ = p + 2;
    if (sign == '-') AfterTagEnd('-', true);
    for (size_t search = pos_;;) {
      const size_t start = source_.find("{%", search);
      if (start == std::string::npos) Raise("missing end of raw directive", line_);
      size_t q = start + 2;
      const char end_sign =
          q < source_.size() && (source_[q] == '-' || source_[q] == '+') ? source_[q++] : '\0';
      while (q < source_.size() && IsSpace(source_[q])) ++q;
      if (source_.compare(q, 6, "endraw") != 0) {
        search = start + 2;
        continue;
      }
      q += 6;
      while (q < source_.size() && IsSpace(source_[q])) ++q;
      char close_sign = '\0';
      if (q < source_.size() && (source_[q] == '-' || source_[q] == '+')) close_sign = source_[q++];
      if (source_.compare(q, 2, "%}") != 0) Raise("malformed endraw tag", line_);
      std::string text = source_.substr(pos_, start - pos_);
      if (end_sign == '-') {
        text.erase(std::find_if_not(text.rbegin(), text.rend(), IsSpace).base(), text.end());
      } else if (end_sign != '+') {
        line_starting_ = false;
        LStripBlock(text);
      }
      Emit(TokenKind::kText, text);
      line_ += std::count(source_.begin() + pos_, source_.begin() + q, '\n');
      pos_ = q + 2;
      AfterTagEnd(close_sign, true);
      return true;
    }
  }

  void LexTag(TokenKind begin) {
    const bool is_block = begin == TokenKind::kBlockBegin;
    Emit(begin, "");
    std::vector<char> balance;
    for (;;) {
      while (pos_ < source_.size() && IsSpace(source_[pos_])) {
        if (source_[pos_] == '\n') ++line_;
        ++pos_;
      }
      if (pos_ >= source_.size()) {
        Raise(is_block ? "unexpected end of template inside a {% %} tag"
                       : "unexpected end of template inside a {{ }} tag",
              line_);
      }
      if (balance.empty()) {
        const std::string_view closer = is_block ? "%}" : "}}";
        char sign = '\0';
        size_t p = pos_;
        if (source_[p] == '-' || (is_block && source_[p] == '+')) sign = source_[p++];
        if (source_.compare(p, 2, closer) == 0) {
          Emit(is_block ? TokenKind::kBlockEnd : TokenKind::kVariableEnd, "");
          pos_ = p + 2;
          AfterTagEnd(sign, is_block);
          return;
        }
      }
      LexExpressionToken(balance);
    }
  }

  void LexExpressionToken(std::vector<char>& balance) {
    const char c = source_[pos_];
    if (IsDigit(c)) return LexNumber();
    if (IsNameStart(c)) {
      size_t end = pos_;
      while (end < source_.size() && (IsNameStart(source_[end]) || IsDigit(source_[end]))) ++end;
      Emit(TokenKind::kName, source_.substr(pos_, end - pos_));
      pos_ = end;
      return;
    }
    if (c == '\'' || c == '"') return LexString(c);
    static constexpr std::string_view kTwoCharOperators[] = {"//", "**", "==", "!=", "<=", ">="};
    for (const std::string_view op : kTwoCharOperators) {
      if (source_.compare(pos_, 2, op) == 0) {
        Emit(TokenKind::kOperator, std::string(op));
        pos_ += 2;
        return;
      }
    }
    static constexpr std::string_view kOneCharOperators = "+-/*%~[](){}<>=.:|,;";
    if (kOneCharOperators.find(c) == std::string_view::npos) {
      Raise(std::string("unexpected char '") + c + "' in a tag", line_);
    }
    if (c == '(' || c == '[' || c == '{') balance.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
    if (c == ')' || c == ']' || c == '}') {
      if (balance.empty()) Raise(std::string("unexpected '") + c + "'", line_);
      if (balance.back() != c) {
        Raise(std::string("unexpected '") + c + "', expected '" + balance.back() + "'", line_);
      }
      balance.pop_back();
    }
    Emit(TokenKind::kOperator, std::string(1, c));
    ++pos_;
  }

  // Digits with optional underscores between them.
  size_t ScanDigits(size_t p) const {
    if (p >= source_.size() || !IsDigit(source_[p])) return p;
    while (p < source_.size() &&
           (IsDigit(source_[p]) ||
            (source_[p] == '_' && p + 1 < source_.size() && IsDigit(source_[p + 1])))) {
      ++p;
    }
    return p;
  }

  void LexNumber() {
    size_t end = ScanDigits(pos_);
    bool is_float = false;
    if (end + 1 < source_.size() && source_[end] == '.' && IsDigit(source_[end + 1])) {
      end = ScanDigits(end + 1);
      is_float = true;
    }
    if (end < source_.size() && (source_[end] == 'e' || source_[end] == 'E')) {
      size_t p = end + 1;
      if (p < source_.size() && (source_[p] == '+' || source_[p] == '-')) ++p;
      const size_t exponent_end = ScanDigits(p);
      if (exponent_end > p) {
        end = exponent_end;
        is_float = true;
      }
    }
    std::string text = source_.substr(pos_, end - pos_);
    text.erase(std::remove(text.begin(), text.end(), '_'), text.end());
    Emit(is_float ? TokenKind::kFloat : TokenKind::kInteger, std::move(text));
    pos_ = end;
  }

  void LexString(char quote) {
    size_t p = pos_ + 1;
    while (p < source_.size() && source_[p] != quote) p += source_[p] == '\\' ? 2 : 1;
    if (p >= source_.size()) Raise("unterminated string literal", line_);
    const std::string body = source_.substr(pos_ + 1, p - pos_ - 1);
    Emit(TokenKind::kString, UnescapeStringLiteral(body, line_));
    line_ += std::count(body.begin(), body.end(), '\n');
    pos_ = p + 1;
  }

  std::string source_;
  size_t pos_ = 0;
  int line_ = 1;
  bool line_starting_ = true;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> Tokenize(std::string_view source) {
  return Lexer(NormalizeSource(source)).Run();
}

}  // namespace slotserve::server::jinja
