#include "server/grpc/source_parsing.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "server/prompt_encoding.h"

namespace slotserve::server {

absl::Status ParseSource(const v1::GenerateRequest& request, const engine::Tokenizer* tokenizer,
                         int eos_id, int vocab_size, engine::GenerationRequest* parsed) {
  if (!request.has_source()) return absl::OkStatus();
  const v1::Source& source = request.source();
  switch (source.input_case()) {
    case v1::Source::kText: {
      if (source.text().empty()) return absl::InvalidArgumentError("source.text must not be empty");
      SLOTSERVE_ASSIGN_OR_RETURN(parsed->source_ids,
                                 EncodeText(source.text(), "source.text", tokenizer, -1));
      if (eos_id >= 0) parsed->source_ids.push_back(eos_id);
      return absl::OkStatus();
    }
    case v1::Source::kTokenIds:
      if (source.token_ids().ids().empty()) {
        return absl::InvalidArgumentError("source.token_ids.ids must not be empty");
      }
      for (int i = 0; i < source.token_ids().ids_size(); ++i) {
        const int32_t id = source.token_ids().ids(i);
        if (id < 0 || id >= vocab_size) {
          return absl::InvalidArgumentError(absl::StrCat("source.token_ids.ids[", i,
                                                         "] must be a token id in [0, ", vocab_size,
                                                         "), got ", id));
        }
      }
      parsed->source_ids.assign(source.token_ids().ids().begin(), source.token_ids().ids().end());
      return absl::OkStatus();
    case v1::Source::INPUT_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(
      "source must hold either text or token_ids when set, got neither");
}

}  // namespace slotserve::server
