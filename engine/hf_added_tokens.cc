#include "engine/hf_added_tokens.h"

#include <algorithm>

#include "engine/hf_unicode.h"

namespace slotserve::engine::hf {
namespace {

// The code point ending just before byte `end` / starting at byte `begin` of valid UTF-8.
char32_t CodePointBefore(std::string_view text, size_t end) {
  size_t begin = end;
  while (begin > 0 && (static_cast<unsigned char>(text[begin - 1]) & 0xC0) == 0x80) --begin;
  if (begin > 0) --begin;
  return DecodeCodePoints(text.substr(begin, end - begin))[0].value;
}

char32_t CodePointAt(std::string_view text, size_t begin) {
  size_t end = begin + 1;
  while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
  return DecodeCodePoints(text.substr(begin, end - begin))[0].value;
}

bool IsWordCharacter(char32_t c) { return IsLetter(c) || IsNumber(c) || c == '_'; }

}  // namespace

absl::StatusOr<AddedTokens> AddedTokens::FromJson(const Json& value, std::string_view path,
                                                  const Normalizer& normalizer) {
  AddedTokens added;
  for (auto& pass : added.by_first_byte_) pass.resize(256);
  if (value.is_null()) return added;
  if (!value.is_array()) return JsonError(path, "must be an array");
  for (size_t i = 0; i < value.size(); ++i) {
    const Json& entry = value[i];
    const std::string entry_path = JsonPath(path, i);
    if (!entry.is_object()) return JsonError(entry_path, "must be an object");
    AddedToken token;
    const auto id = entry.find("id");
    if (id == entry.end() || !id->is_number_integer() || id->get<int64_t>() < 0 ||
        id->get<int64_t>() > (1 << 24)) {
      return JsonError(JsonPath(entry_path, "id"), "must be an id in [0, 16777216]");
    }
    token.id = static_cast<int32_t>(id->get<int64_t>());
    absl::StatusOr<std::string> content = StringField(entry, entry_path, "content");
    if (!content.ok()) return content.status();
    if (content->empty()) return JsonError(JsonPath(entry_path, "content"), "must not be empty");
    token.content = *content;
    for (auto [key, flag] :
         {std::pair{"special", &token.special}, std::pair{"lstrip", &token.lstrip},
          std::pair{"rstrip", &token.rstrip}, std::pair{"single_word", &token.single_word},
          std::pair{"normalized", &token.normalized}}) {
      absl::StatusOr<bool> flag_value = BoolField(entry, entry_path, key, false);
      if (!flag_value.ok()) return flag_value.status();
      *flag = *flag_value;
    }
    added.id_of_.try_emplace(token.content, token.id);
    token.pattern = token.normalized ? normalizer.Normalize(token.content) : token.content;
    added.tokens_.push_back(std::move(token));
  }
  for (size_t k = 0; k < added.tokens_.size(); ++k) {
    const AddedToken& token = added.tokens_[k];
    if (token.pattern.empty()) continue;  // a normalized token the normalizer emptied
    added.by_first_byte_[token.normalized ? 1 : 0][static_cast<uint8_t>(token.pattern[0])]
        .push_back(static_cast<int32_t>(k));
  }
  for (auto& pass : added.by_first_byte_) {
    for (auto& list : pass) {
      std::stable_sort(list.begin(), list.end(), [&](int32_t a, int32_t b) {
        return added.tokens_[a].pattern.size() > added.tokens_[b].pattern.size();
      });
    }
  }
  return added;
}

int32_t AddedTokens::IdOf(std::string_view content) const {
  const auto it = id_of_.find(absl::string_view(content.data(), content.size()));
  return it == id_of_.end() ? -1 : it->second;
}

std::vector<AddedTokens::Segment> AddedTokens::Split(std::string_view text, bool normalized,
                                                     bool parse_special) const {
  std::vector<Segment> segments;
  const auto& candidates = by_first_byte_[normalized ? 1 : 0];
  size_t plain_start = 0;
  size_t i = 0;
  while (i < text.size()) {
    const AddedToken* found = nullptr;
    for (int32_t index : candidates[static_cast<uint8_t>(text[i])]) {
      const AddedToken* token = &tokens_[index];
      if (token->special && !parse_special) continue;
      if (text.compare(i, token->pattern.size(), token->pattern) != 0) continue;
      const size_t end = i + token->pattern.size();
      if (token->single_word && ((i > 0 && IsWordCharacter(CodePointBefore(text, i))) ||
                                 (end < text.size() && IsWordCharacter(CodePointAt(text, end))))) {
        continue;
      }
      found = token;
      break;
    }
    if (found == nullptr) {
      ++i;
      continue;
    }
    size_t begin = i;
    size_t end = i + found->pattern.size();
    if (found->lstrip) {
      while (begin > plain_start && IsWhitespace(CodePointBefore(text, begin))) {
        begin -= 1;
        while (begin > plain_start && (static_cast<unsigned char>(text[begin]) & 0xC0) == 0x80) {
          --begin;
        }
      }
    }
    if (found->rstrip) {
      while (end < text.size() && IsWhitespace(CodePointAt(text, end))) {
        ++end;
        while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
      }
    }
    if (begin > plain_start)
      segments.push_back({-1, text.substr(plain_start, begin - plain_start)});
    segments.push_back({found->id, {}});
    plain_start = end;
    i = end;
  }
  if (plain_start < text.size()) segments.push_back({-1, text.substr(plain_start)});
  return segments;
}

}  // namespace slotserve::engine::hf
