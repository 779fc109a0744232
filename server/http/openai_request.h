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

#include <nlohmann/json.hpp>
#include "absl/status/statusor.h"
#include "server/http/json_params.h"
#include "server/http/openai_errors.h"
#include "server/http/parsed_openai_request.h"
#include "server/http/served_model.h"

namespace slotserve::server::http {

// As OpenAI's legacy completions API (and vLLM's): max_tokens when the request sets none.
inline constexpr int kCompletionsDefaultMaxTokens = 16;

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
