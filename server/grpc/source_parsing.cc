#include "server/grpc/source_parsing.h"

#include "base/status_macros.h"
#include "server/prompt_encoding.h"

namespace slotserve::server {

absl::Status ParseSource(const v1::GenerateRequest& request, const engine::Tokenizer* tokenizer,
                         int eos_id, engine::GenerationRequest* parsed) {
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
      // Used as given: the engine checks them (source_validation.h).
      parsed->source_ids.assign(source.token_ids().ids().begin(), source.token_ids().ids().end());
      return absl::OkStatus();
    case v1::Source::INPUT_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(
      "source must hold either text or token_ids when set, got neither");
}

}  // namespace slotserve::server
