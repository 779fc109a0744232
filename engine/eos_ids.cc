#include "engine/eos_ids.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace slotserve::engine {

absl::StatusOr<std::vector<int32_t>> EosIdSet(int32_t model_eos_id, int32_t tokenizer_eos_id,
                                              std::span<const int32_t> extra_eos_ids,
                                              int vocab_size) {
  std::vector<int32_t> ids;
  for (const int32_t id : {model_eos_id, tokenizer_eos_id}) {
    if (id >= 0) ids.push_back(id);
  }
  for (size_t i = 0; i < extra_eos_ids.size(); ++i) {
    const int32_t id = extra_eos_ids[i];
    if (id < 0 || id >= vocab_size) {
      return absl::InvalidArgumentError(absl::StrCat("extra_eos_ids[", i, "] must be in [0, ",
                                                     vocab_size, ") (the vocabulary), got ", id));
    }
    ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace slotserve::engine
