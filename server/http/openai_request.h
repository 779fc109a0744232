// The edge of the HTTP API: an OpenAI-style JSON body (POST /v1/completions or
// /v1/chat/completions) becomes an engine::GenerationRequest plus how to answer it.
//
// Only what the JSON shape decides is checked here (types, which parameters exist, what this
// server does not support, such as a suffix); every numeric limit is the engine's
// (Scheduler::Submit), whose errors openai_errors.h renames to the parameters sent, so HTTP
// and gRPC never disagree. A completions prompt may be a batch (openai_prompts.h). Parameters:
// OpenAI's, plus vLLM's extensions top_k, min_p, repetition_penalty, min_tokens,
// stop_token_ids, ignore_eos, return_token_ids and (chat) add_generation_prompt. README.md
// lists them with what is refused.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include "absl/status/statusor.h"
#include "engine/generation_request.h"
#include "engine/tokenizer.h"
#include "server/http/chat_template.h"
#include "server/http/json_params.h"
#include "server/http/openai_errors.h"

namespace slotserve::server::http {

class JinjaChatTemplate;

enum class Endpoint { kCompletions, kChat };

// What the parser needs to know about the served model.
struct ServedModel {
  std::string name;                              // what "model" must say, when given
  const engine::Tokenizer* tokenizer = nullptr;  // null: text prompts are refused
  int bos_id = -1;                               // prepended to text prompts (< 0: none)
  const ChatTemplate* chat_template = nullptr;   // required for chat
  // Encoder-decoder models (openai_source.h): "source" is required, "prompt" optional.
  bool seq2seq = false;
  int eos_id = -1;                // ends a text source
  int64_t max_prompt_tokens = 0;  // --max-prompt-tokens: /tokenize's max_model_len
  // The checkpoint's own chat template (jinja_chat_template.h), used instead of chat_template
  // when not null. Last, so that positional initialisers above keep their meaning.
  std::shared_ptr<const JinjaChatTemplate> jinja_chat_template;
};

// As OpenAI's legacy completions API (and vLLM's): max_tokens when the request sets none.
inline constexpr int kCompletionsDefaultMaxTokens = 16;

struct OpenAiRequest {
  Endpoint endpoint = Endpoint::kCompletions;
  engine::GenerationRequest generation;  // request_id and deadline left to the caller
  std::string model;                     // the served model's name, for the response
  bool stream = false;
  bool include_usage = false;     // stream_options.include_usage: a last chunk with usage
  bool return_token_ids = false;  // vLLM's extension: choices[].token_ids
  // echo (completions): each choice's text starts with the prompt, as sent (a string) or
  // decoded (token ids); with logprobs, the prompt's tokens lead its logprobs, the first with
  // null and the rest scored by the engine (LogprobOptions::prompt).
  bool echo = false;
  std::string echo_text;
  // Completions' batch ("prompt": [p0, p1, ...]): the prompts after the first (which is
  // generation.prompt_ids and echo_text), each generated as an engine request of its own with
  // generation's other options. Prompt p's choice j is answered as choice p * n + j.
  struct FurtherPrompt {
    std::vector<int32_t> ids;
    std::string echo_text;
  };
  std::vector<FurtherPrompt> further_prompts;
  // best_of > n: generation.n is best_of, and the keep_best (n) choices of each prompt with the
  // highest log probability per token are returned (best_of.h); 0: every choice is.
  int64_t keep_best = 0;
  // The engine reports logprobs only for best_of's ranking: the answer leaves them out.
  bool hide_logprobs = false;
  ParamNames names;  // what the client called the engine's fields
};

// Errors are INVALID_ARGUMENT (NOT_FOUND for an unknown model) carrying the parameter and a
// code for the error body (openai_errors.h).
// NOT_FOUND naming the served model when the body's "model" names another (absent or empty
// is the served one), as vLLM answers.
absl::Status CheckModel(JsonParams& params, const ServedModel& model);
// INVALID_ARGUMENT quoting the body unless it is a JSON object.
absl::Status RequireObject(const nlohmann::json& body);

absl::StatusOr<OpenAiRequest> ParseCompletionRequest(const nlohmann::json& body,
                                                     const ServedModel& model);
// `ordered_body` is the body with its keys in the order sent, for a Jinja chat template (which
// prints tool schemas as given); null: `body`'s order.
absl::StatusOr<OpenAiRequest> ParseChatRequest(
    const nlohmann::json& body, const ServedModel& model,
    const nlohmann::ordered_json* ordered_body = nullptr);

}  // namespace slotserve::server::http
