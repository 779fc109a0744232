// tokenizer.json's "normalizer": the text rewrites applied to each stretch of input between
// added tokens before it is split into words. Supported: Sequence, Prepend, Replace (with a
// String pattern), NFC, NFKC; anything else is refused at load, naming its JSON path.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/hf_json.h"

namespace slotserve::engine::hf {

class Normalizer {
 public:
  // `value` is the normalizer at `path` (null: text passes unchanged).
  static absl::StatusOr<Normalizer> FromJson(const Json& value, std::string_view path);

  std::string Normalize(std::string_view text) const;
  bool empty() const { return steps_.empty(); }

 private:
  enum class Kind { kPrepend, kReplace, kNfc, kNfkc };
  struct Step {
    Kind kind;
    std::string from;  // kReplace: the pattern
    std::string to;    // kReplace: the content; kPrepend: the prefix
  };
  static absl::Status AddSteps(const Json& value, std::string_view path, std::vector<Step>* out);

  std::vector<Step> steps_;
};

// A Replace normalizer's or decoder's {"pattern": {"String": from}, "content": to}.
struct Replacement {
  std::string from;  // never empty
  std::string to;
};
absl::StatusOr<Replacement> ReadReplacement(const Json& value, std::string_view path);

// Every occurrence of `from` (non-empty) in `text` replaced by `to`.
std::string ReplaceAll(std::string_view text, std::string_view from, std::string_view to);

}  // namespace slotserve::engine::hf
