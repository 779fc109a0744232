// An OpenAI-style request once parsed (openai_request.h parses it): the engine request and how
// to answer it (openai_response.h, openai_generation.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/generation_request.h"
#include "server/http/openai_errors.h"

namespace slotserve::server::http {

enum class Endpoint { kCompletions, kChat };

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

}  // namespace slotserve::server::http
