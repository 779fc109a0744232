// tokenizer.json's "pre_tokenizer": splits normalised text into the words the BPE model
// encodes one by one. Supported: Sequence; Split with a String pattern (any behaviour) or one
// of the known regexes (hf_split_patterns.h; "Isolated", not inverted); ByteLevel (with or
// without its GPT-2 regex and add_prefix_space); Metaspace (replacement, prepend_scheme
// always / first / never or the older add_prefix_space, split). Anything else is refused at
// load, naming its JSON path.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/hf_json.h"
#include "engine/hf_split_patterns.h"

namespace slotserve::engine::hf {

class PreTokenizer {
 public:
  // `value` is the pre-tokenizer at `path` (null: the whole text is one word).
  static absl::StatusOr<PreTokenizer> FromJson(const Json& value, std::string_view path);

  // Appends the words of `text` to *words. `at_input_start`: `text` begins the input (no
  // added token before it), which Metaspace's prepend_scheme "first" asks about.
  void Split(std::string_view text, bool at_input_start, std::vector<std::string>* words) const;

 private:
  enum class Kind { kSplitString, kSplitPattern, kByteLevel, kMetaspace };
  enum class Behavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };
  enum class Prepend { kAlways, kFirst, kNever };
  struct Step {
    Kind kind = Kind::kSplitString;
    std::string text;  // kSplitString: the delimiter; kMetaspace: the replacement
    Behavior behavior = Behavior::kIsolated;
    std::optional<SplitPattern> pattern;  // kSplitPattern; kByteLevel with use_regex
    bool add_prefix_space = false;        // kByteLevel
    Prepend prepend = Prepend::kNever;    // kMetaspace
    bool split = true;                    // kMetaspace
  };
  static absl::Status AddSteps(const Json& value, std::string_view path, std::vector<Step>* out);
  static void Apply(const Step& step, std::string_view piece, bool at_input_start,
                    std::vector<std::string>* out);

  std::vector<Step> steps_;
};

}  // namespace slotserve::engine::hf
