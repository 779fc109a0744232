#include "engine/request_validation.h"

#include <cmath>
#include <iterator>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/utf8.h"
#include "engine/sampling_options.h"
#include "engine/source_validation.h"

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

absl::Status CheckBeamOptions(const GenerationRequest& request, const RequestLimits& limits) {
  const BeamOptions& beam = request.beam;
  if (beam.width < 1 || beam.width > limits.max_beam_width) {
    return Invalid(absl::StrCat("beam.width must be in [1, ", limits.max_beam_width,
                                "] (the server's --max-beam-width, capped by its slots), got ",
                                beam.width));
  }
  if (beam.n_best < 1 || beam.n_best > beam.width) {
    return Invalid(absl::StrCat("beam.n_best must be in [1, beam.width = ", beam.width, "], got ",
                                beam.n_best));
  }
  if (!std::isfinite(beam.length_penalty)) {
    return Invalid(absl::StrCat("beam.length_penalty must be finite, got ", beam.length_penalty));
  }
  if (!beam.enabled()) return absl::OkStatus();
  const std::string with_beam = absl::StrCat(" with beam.width = ", beam.width);
  if (request.n != 1) {
    return Invalid(absl::StrCat("n must be 1", with_beam,
                                " (the n-best hypotheses come back in one stream), got ",
                                request.n));
  }
  // Beam search ranks the model's raw log-probabilities and draws nothing at random.
  const SamplingOptions& sampling = request.sampling;
  const std::string deterministic =
      absl::StrCat(with_beam, " (beam search is deterministic), got ");
  if (sampling.temperature != 0.0f) {
    return Invalid(absl::StrCat("sampling.temperature must be 0 or unset", deterministic,
                                sampling.temperature));
  }
  const std::pair<const char*, bool> options_off[] = {
      {"sampling.top_k must be 0", sampling.top_k == 0},
      {"sampling.top_p must be 1 or unset", sampling.top_p == 1.0f},
      {"sampling.min_p must be 0", sampling.min_p == 0.0f},
      {"sampling.repetition_penalty must be 1 or unset", sampling.repetition_penalty == 1.0f},
      {"sampling.presence_penalty must be 0", sampling.presence_penalty == 0.0f},
      {"sampling.frequency_penalty must be 0", sampling.frequency_penalty == 0.0f}};
  const double values[] = {static_cast<double>(sampling.top_k),
                           sampling.top_p,
                           sampling.min_p,
                           sampling.repetition_penalty,
                           sampling.presence_penalty,
                           sampling.frequency_penalty};
  for (size_t i = 0; i < std::size(options_off); ++i) {
    if (!options_off[i].second) {
      return Invalid(absl::StrCat(options_off[i].first, deterministic, values[i]));
    }
  }
  if (sampling.seed.has_value()) {
    return Invalid(absl::StrCat("sampling.seed must be unset", deterministic, *sampling.seed));
  }
  if (!sampling.logit_bias.empty()) {
    return Invalid(absl::StrCat("sampling.logit_bias must be empty", with_beam,
                                " (hypotheses are ranked by the model's raw log-probabilities), "
                                "got ",
                                sampling.logit_bias.size(), " token(s)"));
  }
  if (request.logprobs.enabled) {
    return Invalid(absl::StrCat("logprobs.enabled must be false", with_beam,
                                " (each hypothesis reports its logprob_sum instead), got true"));
  }
  if (!request.stopping.stop_sequences.empty()) {
    return Invalid(absl::StrCat("stopping.stop_sequences must be empty", with_beam,
                                " (hypotheses end at eos, stop_token_ids or max_new_tokens), got ",
                                request.stopping.stop_sequences.size(),
                                " sequence(s), the first \"",
                                request.stopping.stop_sequences.front(), "\""));
  }
  if (request.session.keep || !request.session.handle.empty()) {
    return Invalid(absl::StrCat(
        "session must be unset", with_beam,
        " (a beam search frees its hypotheses' states as they finish, and does not continue "
        "sessions), got ",
        request.session.keep ? "keep = true" : absl::StrCat("handle ", request.session.handle)));
  }
  return absl::OkStatus();
}

// LogprobOptions::prompt scores the prompt from its first token: each score's context is the
// prompt before it, which a session's state would change. A seq2seq source is part of every
// score's context by definition (the scores are those of a translation given its source).
absl::Status CheckPromptScoring(const GenerationRequest& request) {
  if (!request.logprobs.prompt) return absl::OkStatus();
  if (!request.logprobs.enabled) {
    return Invalid("logprobs.prompt (score the prompt) needs logprobs.enabled");
  }
  if (!request.session.handle.empty()) {
    return Invalid(absl::StrCat("logprobs.prompt (score the prompt) cannot continue a session (",
                                request.session.handle,
                                "): the prompt's first token would be scored in its context"));
  }
  return absl::OkStatus();
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
  if (absl::Status s = CheckSamplingOptions(request.sampling, "sampling"); !s.ok()) {
    return s;
  }
  SLOTSERVE_RETURN_IF_ERROR(
      CheckLogitBias(request.sampling.logit_bias, limits.vocab_size, "sampling.logit_bias"));
  SLOTSERVE_RETURN_IF_ERROR(CheckStopping(request.stopping, limits));
  if (request.n < 1 || request.n > limits.max_n) {
    return Invalid(absl::StrCat("n must be in [1, ", limits.max_n, "], got ", request.n));
  }
  if (request.logprobs.top_n < 0 || request.logprobs.top_n > limits.max_top_logprobs) {
    return Invalid(absl::StrCat("logprobs.top_n must be in [0, ", limits.max_top_logprobs,
                                "], got ", request.logprobs.top_n));
  }
  SLOTSERVE_RETURN_IF_ERROR(CheckPromptScoring(request));
  return CheckBeamOptions(request, limits);
}

}  // namespace slotserve::engine
