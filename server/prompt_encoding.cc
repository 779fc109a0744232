#include "server/prompt_encoding.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/utf8.h"

namespace slotserve::server {

absl::Status CheckUtf8(const std::string& text, absl::string_view field) {
  if (base::IsValidUtf8(text)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, " must be valid UTF-8, got bytes that are not"));
}

absl::StatusOr<std::vector<int32_t>> EncodeText(const std::string& text, absl::string_view field,
                                                const engine::Tokenizer* tokenizer, int bos_id) {
  SLOTSERVE_RETURN_IF_ERROR(CheckUtf8(text, field));
  if (tokenizer == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        field, ": this model directory has no tokenizer.model; send token ids instead"));
  }
  absl::StatusOr<std::vector<int32_t>> pieces = tokenizer->Encode(text);
  if (!pieces.ok()) {
    return absl::Status(pieces.status().code(),
                        absl::StrCat(field, ": ", pieces.status().message()));
  }
  std::vector<int32_t> ids;
  ids.reserve(pieces->size() + 1);
  if (bos_id >= 0) ids.push_back(bos_id);
  ids.insert(ids.end(), pieces->begin(), pieces->end());
  return ids;
}

}  // namespace slotserve::server
