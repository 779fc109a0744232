#include "server/grpc/request_parsing.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "base/status_macros.h"

namespace slotserve::server {
namespace {

engine::SamplingOptions ParseSampling(const v1::SamplingParams& proto) {
  engine::SamplingOptions options;
  if (proto.has_temperature()) options.temperature = proto.temperature();
  options.top_k = proto.top_k();
  if (proto.has_top_p()) options.top_p = proto.top_p();
  options.min_p = proto.min_p();
  if (proto.has_repetition_penalty()) options.repetition_penalty = proto.repetition_penalty();
  options.presence_penalty = proto.presence_penalty();
  options.frequency_penalty = proto.frequency_penalty();
  if (proto.has_seed()) options.seed = proto.seed();
  for (const auto& [id, bias] : proto.logit_bias()) options.logit_bias.push_back({id, bias});
  // A proto map's order is unspecified: sorted, a request's list is the same on every replica.
  std::sort(options.logit_bias.begin(), options.logit_bias.end(),
            [](const auto& a, const auto& b) { return a.id < b.id; });
  return options;
}

absl::StatusOr<engine::StoppingOptions> ParseStopping(const v1::StoppingParams& proto) {
  engine::StoppingOptions options;
  if (proto.has_max_new_tokens()) {
    if (proto.max_new_tokens() == 0) {
      return absl::InvalidArgumentError(
          "stopping.max_new_tokens must be > 0 when set (leave it unset for the server's "
          "default), got 0");
    }
    options.max_new_tokens = proto.max_new_tokens();  // int64: every uint32 fits as sent
  }
  options.min_new_tokens = proto.min_new_tokens();
  // proto `bytes`, so possibly not UTF-8: the engine checks them.
  options.stop_sequences.assign(proto.stop_sequences().begin(), proto.stop_sequences().end());
  options.stop_token_ids.assign(proto.stop_token_ids().begin(), proto.stop_token_ids().end());
  options.ignore_eos = proto.ignore_eos();
  return options;
}

}  // namespace

engine::SampledFieldsSet SampledFieldsOf(const v1::SamplingParams& proto) {
  return {.temperature = proto.has_temperature(),
          .top_k = proto.top_k() != 0,
          .top_p = proto.has_top_p(),
          .min_p = proto.min_p() != 0.0f,
          .repetition_penalty = proto.has_repetition_penalty()};
}

absl::StatusOr<engine::GenerationRequest> ParseGenerateRequest(const v1::GenerateRequest& request,
                                                               const engine::Tokenizer* tokenizer,
                                                               int bos_id, absl::Time deadline) {
  engine::GenerationRequest parsed;
  parsed.request_id = request.request_id();
  // Beside a source (source_parsing.h) the prompt is an optional target prefix, without BOS.
  const bool target_prefix = request.has_source();
  switch (request.prompt_case()) {
    case v1::GenerateRequest::kText:
    case v1::GenerateRequest::kPromptText: {
      // The same prompt as bytes or as a string (for JSON clients); errors name the one given.
      const bool as_bytes = request.prompt_case() == v1::GenerateRequest::kText;
      const std::string& text = as_bytes ? request.text() : request.prompt_text();
      const char* field = as_bytes ? "text" : "prompt_text";
      if (text.empty()) {
        if (target_prefix) break;
        return absl::InvalidArgumentError(absl::StrCat(field, " must not be empty"));
      }
      // A session's continuation goes on from its context: no new BOS.
      const bool starts_context = request.session().handle().empty() && !target_prefix;
      SLOTSERVE_ASSIGN_OR_RETURN(parsed.prompt_ids,
                                 EncodeText(text, field, tokenizer, starts_context ? bos_id : -1));
      break;
    }
    case v1::GenerateRequest::kTokenIds:
      if (request.token_ids().ids().empty()) {
        return absl::InvalidArgumentError("token_ids.ids must not be empty");
      }
      // Used as given: the engine checks them against the vocabulary (proto_field_names.h
      // names its refusal token_ids.ids[i]).
      parsed.prompt_ids.assign(request.token_ids().ids().begin(), request.token_ids().ids().end());
      break;
    case v1::GenerateRequest::PROMPT_NOT_SET:
      if (target_prefix) break;
      return absl::InvalidArgumentError(
          "prompt must be set: give text, prompt_text or token_ids, got none");
  }
  parsed.sampling = ParseSampling(request.sampling());
  // Beam search (the engine checks the bounds): width and n_best 0 mean 1 as the proto says.
  parsed.beam.width = request.beam().width() == 0 ? 1 : request.beam().width();
  parsed.beam.n_best = request.beam().n_best() == 0 ? 1 : request.beam().n_best();
  parsed.beam.length_penalty = request.beam().length_penalty();
  // A beam search is deterministic: an unset temperature is greedy's 0, not the default 1
  // (one set to anything else is refused by the engine, quoting it). A width of 1, a beam of
  // one, is greedy decoding too (as CTranslate2's beam_size 1), unless a temperature is given:
  // then it is an ordinary request at that temperature.
  if (request.beam().width() >= 1 && !request.sampling().has_temperature()) {
    parsed.sampling.temperature = 0.0f;
  }
  SLOTSERVE_ASSIGN_OR_RETURN(parsed.stopping, ParseStopping(request.stopping()));
  parsed.logprobs.enabled = request.logprobs().enabled();
  parsed.logprobs.top_n = request.logprobs().top_n();
  parsed.logprobs.prompt = request.logprobs().prompt();
  parsed.n = request.n() == 0 ? 1 : request.n();  // the engine checks the bound
  parsed.session.keep = request.session().keep();
  parsed.session.handle = request.session().handle();
  parsed.deadline = deadline;
  return parsed;
}

}  // namespace slotserve::server
