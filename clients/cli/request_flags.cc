#include "clients/cli/request_flags.h"

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "clients/cli/source_flags.h"

ABSL_FLAG(std::optional<float>, temperature, std::nullopt, "0 = greedy; default 1");
ABSL_FLAG(int, top_k, 0, "Keep only the k most likely tokens (0 = off)");
ABSL_FLAG(std::optional<float>, top_p, std::nullopt, "Nucleus sampling mass in (0, 1]");
ABSL_FLAG(float, min_p, 0.0f, "Drop tokens below min_p x the top token's probability");
ABSL_FLAG(std::optional<float>, repetition_penalty, std::nullopt, "> 0; 1 = off");
ABSL_FLAG(float, presence_penalty, 0.0f, "In [-2, 2]");
ABSL_FLAG(float, frequency_penalty, 0.0f, "In [-2, 2]");
ABSL_FLAG(std::vector<std::string>, logit_bias, {},
          "Token biases, comma-separated id:bias pairs (bias in [-100, 100]; -100 bans a token)");
ABSL_FLAG(std::optional<uint64_t>, seed, std::nullopt,
          "Seed of the request's random stream (default: the server picks one and reports it)");
ABSL_FLAG(std::optional<uint32_t>, max_new_tokens, std::nullopt,
          "Most tokens to generate (default: the server's)");
ABSL_FLAG(uint32_t, min_new_tokens, 0, "Ignore EOS and stop sequences before this many tokens");
ABSL_FLAG(std::vector<std::string>, stop, {},
          "Stop sequences, comma-separated; C escapes work (\\n, \\x2c for a comma)");
ABSL_FLAG(std::vector<std::string>, stop_token_ids, {}, "Stop token ids, comma-separated");
ABSL_FLAG(bool, ignore_eos, false, "Keep generating past the end-of-sequence token");
ABSL_FLAG(std::optional<uint32_t>, logprobs, std::nullopt,
          "Report log-probabilities, with this many top alternatives per token (0..20)");
ABSL_FLAG(std::vector<std::string>, token_ids, {},
          "Prompt as comma-separated token ids instead of text");
ABSL_FLAG(std::string, request_id, "", "Label for the server's logs");
ABSL_FLAG(std::optional<uint32_t>, n, std::nullopt,
          "Choices of the prompt, prefilled once; choice i samples with seed + i (generate)");
ABSL_FLAG(std::optional<uint32_t>, beam, std::nullopt,
          "Beam search with this many hypotheses (> 1; deterministic: no sampling flags); the "
          "n-best are printed with their scores");
ABSL_FLAG(std::optional<uint32_t>, n_best, std::nullopt,
          "With --beam: how many finished hypotheses to print, best first (default 1)");
ABSL_FLAG(std::optional<float>, length_penalty, std::nullopt,
          "With --beam: score = logprob sum / length^A (default 0: the plain sum)");
ABSL_FLAG(bool, keep_session, false,
          "Keep the final state on the server; the summary names the session handle");
ABSL_FLAG(std::string, session, "",
          "Continue this session (a handle from --keep-session or import-session)");

namespace slotserve::clients {

bool PromptGivenAsTokenIds() { return !absl::GetFlag(FLAGS_token_ids).empty(); }

absl::StatusOr<v1::GenerateRequest> BuildGenerateRequest(const std::string& prompt) {
  v1::GenerateRequest request;
  request.set_request_id(absl::GetFlag(FLAGS_request_id));
  if (PromptGivenAsTokenIds()) {
    for (const std::string& text : absl::GetFlag(FLAGS_token_ids)) {
      int32_t id;
      if (!absl::SimpleAtoi(text, &id)) {
        return absl::InvalidArgumentError(
            absl::StrCat("--token-ids: \"", text, "\" is not an integer token id"));
      }
      request.mutable_token_ids()->add_ids(id);
    }
  } else {
    request.set_text(prompt);
  }

  v1::SamplingParams& sampling = *request.mutable_sampling();
  if (auto t = absl::GetFlag(FLAGS_temperature)) sampling.set_temperature(*t);
  sampling.set_top_k(absl::GetFlag(FLAGS_top_k));
  if (auto p = absl::GetFlag(FLAGS_top_p)) sampling.set_top_p(*p);
  sampling.set_min_p(absl::GetFlag(FLAGS_min_p));
  if (auto r = absl::GetFlag(FLAGS_repetition_penalty)) sampling.set_repetition_penalty(*r);
  sampling.set_presence_penalty(absl::GetFlag(FLAGS_presence_penalty));
  sampling.set_frequency_penalty(absl::GetFlag(FLAGS_frequency_penalty));
  if (auto seed = absl::GetFlag(FLAGS_seed)) sampling.set_seed(*seed);
  for (const std::string& pair : absl::GetFlag(FLAGS_logit_bias)) {
    const size_t colon = pair.find(':');
    int32_t id;
    float bias;
    if (colon == std::string::npos || !absl::SimpleAtoi(pair.substr(0, colon), &id) ||
        !absl::SimpleAtof(pair.substr(colon + 1), &bias)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--logit-bias: \"", pair, "\" is not a token id and a bias (id:bias)"));
    }
    (*sampling.mutable_logit_bias())[id] = bias;
  }

  v1::StoppingParams& stopping = *request.mutable_stopping();
  if (auto n = absl::GetFlag(FLAGS_max_new_tokens)) stopping.set_max_new_tokens(*n);
  stopping.set_min_new_tokens(absl::GetFlag(FLAGS_min_new_tokens));
  for (const std::string& escaped : absl::GetFlag(FLAGS_stop)) {
    std::string stop, error;
    if (!absl::CUnescape(escaped, &stop, &error)) {
      return absl::InvalidArgumentError(absl::StrCat("--stop \"", escaped, "\": ", error));
    }
    stopping.add_stop_sequences(stop);
  }
  for (const std::string& text : absl::GetFlag(FLAGS_stop_token_ids)) {
    int32_t id;
    if (!absl::SimpleAtoi(text, &id)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--stop-token-ids: \"", text, "\" is not an integer token id"));
    }
    stopping.add_stop_token_ids(id);
  }
  stopping.set_ignore_eos(absl::GetFlag(FLAGS_ignore_eos));

  if (auto n = absl::GetFlag(FLAGS_n)) request.set_n(*n);
  const std::optional<uint32_t> beam = absl::GetFlag(FLAGS_beam);
  if ((absl::GetFlag(FLAGS_n_best) || absl::GetFlag(FLAGS_length_penalty)) && !beam) {
    return absl::InvalidArgumentError("--n-best and --length-penalty need --beam");
  }
  if (beam) {
    request.mutable_beam()->set_width(*beam);
    if (auto n_best = absl::GetFlag(FLAGS_n_best)) request.mutable_beam()->set_n_best(*n_best);
    if (auto penalty = absl::GetFlag(FLAGS_length_penalty)) {
      request.mutable_beam()->set_length_penalty(*penalty);
    }
  }
  request.mutable_session()->set_keep(absl::GetFlag(FLAGS_keep_session));
  request.mutable_session()->set_handle(absl::GetFlag(FLAGS_session));
  if (!request.session().keep() && request.session().handle().empty()) request.clear_session();

  if (absl::Status source = AddSource(&request); !source.ok()) return source;
  if (auto top_n = absl::GetFlag(FLAGS_logprobs)) {
    request.mutable_logprobs()->set_enabled(true);
    request.mutable_logprobs()->set_top_n(*top_n);
  }
  return request;
}

}  // namespace slotserve::clients
