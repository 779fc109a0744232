#include "engine/request_validation.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/utf8.h"
#include "engine/source_validation.h"
#include "models/token_sampling.h"

namespace slotserve::engine {
namespace {

absl::Status Invalid(const std::string& message) { return absl::InvalidArgumentError(message); }

absl::Status CheckTokenIds(const std::vector<int32_t>& ids, const char* field, int vocab_size) {
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= vocab_size) {
      return Invalid(absl::StrCat(field, "[", i, "] must be a token id in [0, ", vocab_size,
                                  "), got ", ids[i]));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckStopping(const StoppingOptions& s, const RequestLimits& limits) {
  if (s.max_new_tokens < 0 || s.max_new_tokens > limits.max_new_tokens_limit) {
    return Invalid(absl::StrCat("stopping.max_new_tokens must be in [1, ",
                                limits.max_new_tokens_limit, "] (0 = the default, ",
                                limits.default_max_new_tokens, "), got ", s.max_new_tokens));
  }
  const int32_t max_new = EffectiveMaxNewTokens(s, limits);
  if (s.min_new_tokens < 0 || s.min_new_tokens > max_new) {
    return Invalid(absl::StrCat("stopping.min_new_tokens must be in [0, max_new_tokens = ", max_new,
                                "], got ", s.min_new_tokens));
  }
  if (static_cast<int>(s.stop_sequences.size()) > limits.max_stop_sequences) {
    return Invalid(absl::StrCat("stopping.stop_sequences may hold at most ",
                                limits.max_stop_sequences, " sequences, got ",
                                s.stop_sequences.size()));
  }
  for (size_t i = 0; i < s.stop_sequences.size(); ++i) {
    const std::string& stop = s.stop_sequences[i];
    if (stop.empty()) {
      return Invalid(absl::StrCat("stopping.stop_sequences[", i, "] must not be empty"));
    }
    if (static_cast<int>(stop.size()) > limits.max_stop_sequence_bytes) {
      return Invalid(absl::StrCat("stopping.stop_sequences[", i, "] must be at most ",
                                  limits.max_stop_sequence_bytes, " bytes, got ", stop.size()));
    }
    if (!base::IsValidUtf8(stop)) {
      return Invalid(absl::StrCat("stopping.stop_sequences[", i, "] must be valid UTF-8"));
    }
  }
  if (!s.stop_sequences.empty() && !limits.has_tokenizer) {
    return absl::FailedPreconditionError(
        "stopping.stop_sequences need the model's tokenizer.model, which this server has not "
        "loaded; use stopping.stop_token_ids instead");
  }
  return CheckTokenIds(s.stop_token_ids, "stopping.stop_token_ids", limits.vocab_size);
}

}  // namespace

int32_t EffectiveMaxNewTokens(const StoppingOptions& stopping, const RequestLimits& limits) {
  // Validation has bounded max_new_tokens by max_new_tokens_limit (an int32).
  return stopping.max_new_tokens == 0 ? limits.default_max_new_tokens
                                      : static_cast<int32_t>(stopping.max_new_tokens);
}

absl::Status ValidateGenerationRequest(const GenerationRequest& request,
                                       const RequestLimits& limits) {
  SLOTSERVE_RETURN_IF_ERROR(ValidateSource(request, limits));
  const size_t prompt_tokens = request.prompt_ids.size();
  if (prompt_tokens == 0 && !EmptyPromptAllowed(request, limits))
    return Invalid("prompt must hold at least one token, got none");
  if (prompt_tokens > static_cast<size_t>(limits.max_prompt_tokens)) {
    return Invalid(absl::StrCat("prompt must be at most ", limits.max_prompt_tokens,
                                " tokens, got ", prompt_tokens));
  }
  if (static_cast<int64_t>(prompt_tokens) > limits.max_positions) {
    return Invalid(absl::StrCat("prompt must be at most ", limits.max_positions,
                                " tokens (the model's longest context), got ", prompt_tokens));
  }
  if (absl::Status s = CheckTokenIds(request.prompt_ids, "prompt_ids", limits.vocab_size);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = models::CheckSamplingOptions(request.sampling, "sampling"); !s.ok()) {
    return s;
  }
  SLOTSERVE_RETURN_IF_ERROR(CheckStopping(request.stopping, limits));
  if (request.n < 1 || request.n > limits.max_n) {
    return Invalid(absl::StrCat("n must be in [1, ", limits.max_n, "], got ", request.n));
  }
  if (request.logprobs.top_n < 0 || request.logprobs.top_n > limits.max_top_logprobs) {
    return Invalid(absl::StrCat("logprobs.top_n must be in [0, ", limits.max_top_logprobs,
                                "], got ", request.logprobs.top_n));
  }
  return absl::OkStatus();
}

}  // namespace slotserve::engine
