// tokenizer.json's "decoder", reduced to what streaming needs: the bytes each token
// contributes mid-sequence, and what is dropped once from the start of a sequence. Supported:
// Sequence, Replace (String pattern), ByteFallback, ByteLevel, Metaspace, Fuse, and Strip
// (per token before a Fuse; after it only from the start, as stripping the end of a
// sequence cannot be streamed). Anything else is refused at load, naming its JSON path.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/hf_json.h"

namespace slotserve::engine::hf {

class Decoder {
 public:
  // `value` is the decoder at `path` (null: pieces decode to themselves).
  static absl::StatusOr<Decoder> FromJson(const Json& value, std::string_view path);

  // The bytes `piece` decodes to inside a sequence (possibly an incomplete UTF-8 character:
  // a <0xNN> or byte-level piece).
  std::string PieceBytes(std::string_view piece) const;
  // How many bytes to drop from the start of the sequence's text `text`.
  size_t StartStrip(std::string_view text) const;

 private:
  enum class Kind { kReplace, kByteFallback, kByteLevel, kStrip };
  struct Step {
    Kind kind;
    std::string from;  // kReplace: the pattern; kStrip: the content
    std::string to;    // kReplace: the content
    int start = 0;     // kStrip: how many leading `from` to remove
    int stop = 0;      // kStrip: how many trailing ones
  };
  absl::Status AddSteps(const Json& value, std::string_view path);

  std::vector<Step> steps_;
  bool fused_ = false;         // a Fuse has been read: later steps act on the sequence
  std::string start_content_;  // dropped from the start of a sequence...
  int start_count_ = 0;        // ...at most this many times
};

}  // namespace slotserve::engine::hf
