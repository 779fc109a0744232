// Completions' "prompt" in every form OpenAI takes: a string, an array of token ids, or an
// array of those (a batch: each element a prompt of its own, generated as its own engine
// request, openai_generation.cc). Text is encoded with BOS first (none beside a seq2seq
// source, where the prompt is an optional target prefix); ids are used as given, as gRPC's
// token_ids (the engine checks their range).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include "absl/status/statusor.h"
#include "server/http/json_params.h"
#include "server/http/served_model.h"

namespace slotserve::server::http {

struct SentPrompt {
  std::vector<int32_t> ids;
  // With `echo`: the prompt as the client sent it when it was text, else its ids decoded
  // (empty without a tokenizer).
  std::string echo_text;
};

// Every prompt of the request, in order (one unless a batch). Errors name the parameter:
// "prompt", or "prompt[i]" for an element of a batch of several.
absl::StatusOr<std::vector<SentPrompt>> ReadPrompts(JsonParams& params, const ServedModel& model,
                                                    bool echo);

}  // namespace slotserve::server::http
