// tokenizer.json's "added_tokens": pieces matched in the text before the model sees it
// (special ones such as "<|im_start|>", and plain ones such as Qwen's "<think>"), with their
// lstrip / rstrip (absorb the whitespace beside them), single_word (only between non-word
// characters) and normalized (matched in the normalised text, not the raw one) flags. The
// longest token starting leftmost wins, as `tokenizers`' matcher does.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "engine/hf_json.h"
#include "engine/hf_normalizer.h"

namespace slotserve::engine::hf {

struct AddedToken {
  int32_t id = -1;
  std::string content;  // as tokenizer.json has it
  std::string pattern;  // what is matched: the content, normalised when `normalized`
  bool special = false;
  bool lstrip = false;
  bool rstrip = false;
  bool single_word = false;
  bool normalized = false;
};

class AddedTokens {
 public:
  // `value` is the array at `path`; `normalizer` rewrites the content of normalized tokens
  // (as `tokenizers` does) so that they match normalised text.
  static absl::StatusOr<AddedTokens> FromJson(const Json& value, std::string_view path,
                                              const Normalizer& normalizer);

  // A stretch of text, or an added token found in it.
  struct Segment {
    int32_t id;             // the token; -1 for plain text
    std::string_view text;  // the plain text (empty for a token)
  };
  // Splits `text` at the tokens of one pass (`normalized`: those matched in normalised
  // text). Special tokens match only when `parse_special`.
  std::vector<Segment> Split(std::string_view text, bool normalized, bool parse_special) const;

  const std::vector<AddedToken>& tokens() const { return tokens_; }
  // The id of the added token with this content; -1 when there is none.
  int32_t IdOf(std::string_view content) const;

 private:
  std::vector<AddedToken> tokens_;
  // By first byte: the tokens of each pass starting with it, longest first.
  std::vector<std::vector<int32_t>> by_first_byte_[2];  // indices into tokens_
  absl::flat_hash_map<std::string, int32_t> id_of_;
};

}  // namespace slotserve::engine::hf
