#include "engine/source_validation.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "engine/request_validation.h"

namespace slotserve::engine {

bool EmptyPromptAllowed(const GenerationRequest& request, const RequestLimits& limits) {
  return limits.seq2seq && !request.source_ids.empty();
}

absl::Status ValidateSource(const GenerationRequest& request, const RequestLimits& limits) {
  const std::vector<int32_t>& source = request.source_ids;
  const bool continues_session = !request.session.handle.empty();
  if (!limits.seq2seq) {
    if (source.empty()) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        "source is only for encoder-decoder models; this model is decoder-only, got a source of ",
        source.size(), " tokens"));
  }
  if (continues_session) {
    if (source.empty()) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        "source must not be set when continuing session ", request.session.handle,
        ": its state already holds its source; got a source of ", source.size(), " tokens"));
  }
  if (source.empty()) {
    return absl::InvalidArgumentError(
        "source must hold at least one token: this encoder-decoder model translates a source "
        "(text or token_ids), got none");
  }
  if (source.size() > static_cast<size_t>(limits.max_source_tokens)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "source must be at most ", limits.max_source_tokens, " tokens, got ", source.size()));
  }
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] < 0 || source[i] >= limits.vocab_size) {
      return absl::InvalidArgumentError(absl::StrCat("source_ids[", i,
                                                     "] must be a token id in [0, ",
                                                     limits.vocab_size, "), got ", source[i]));
    }
  }
  // The decoder feeds decoder_start_id before the prompt.
  const int64_t decoder_inputs = static_cast<int64_t>(request.prompt_ids.size()) + 1;
  if (decoder_inputs > limits.max_positions) {
    return absl::InvalidArgumentError(
        absl::StrCat("prompt (the target prefix) must be at most ", limits.max_positions - 1,
                     " tokens (the decoder's longest context less decoder_start_id), got ",
                     request.prompt_ids.size()));
  }
  return absl::OkStatus();
}

}  // namespace slotserve::engine
