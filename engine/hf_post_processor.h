// tokenizer.json's "post_processor", for a single sequence: the special tokens it puts
// before and after the encoded text. Supported: TemplateProcessing (its "single" template),
// ByteLevel (offsets only: adds nothing), Sequence of those; anything else is refused at
// load, naming its JSON path.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/hf_json.h"

namespace slotserve::engine::hf {

struct PostProcessor {
  std::vector<int32_t> prefix_ids;  // before the sequence ("<s>")
  std::vector<int32_t> suffix_ids;  // after it

  static absl::StatusOr<PostProcessor> FromJson(const Json& value, std::string_view path);
};

}  // namespace slotserve::engine::hf
