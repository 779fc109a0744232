// Engine events -> OpenAI response objects (the other half of openai_request.h): the whole
// completion, the chunks of a stream (server-sent events), usage, and logprobs in OpenAI's
// two shapes (completions: {tokens, token_logprobs, top_logprobs, text_offset}; chat:
// {content: [{token, logprob, bytes, top_logprobs}]}).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include "engine/generation_events.h"
#include "engine/tokenizer.h"
#include "server/http/openai_request.h"

namespace slotserve::server::http {

// What every object of one response repeats.
struct ResponseHeader {
  std::string id;  // "cmpl-..." or "chatcmpl-..."
  int64_t created = 0;
  std::string model;
};

// Formats logprobs; keeps the text offset of the completions shape across stream chunks.
class LogprobsFormatter {
 public:
  // `tokenizer` may be null: tokens are then named "token_id:<id>".
  LogprobsFormatter(const engine::Tokenizer* tokenizer, Endpoint endpoint)
      : tokenizer_(tokenizer), endpoint_(endpoint) {}

  // The "logprobs" member of a choice for these tokens (null when there are none).
  nlohmann::ordered_json Format(const std::vector<engine::GeneratedTokenLogprobs>& logprobs);

 private:
  std::string TokenText(int32_t id) const;
  // Chat's "bytes": the token's exact bytes (empty without a tokenizer).
  nlohmann::ordered_json TokenBytes(int32_t id) const;

  const engine::Tokenizer* tokenizer_;
  Endpoint endpoint_;
  int64_t text_offset_ = 0;  // characters of the token texts before the next token
};

// One choice's whole output, for an answer that is not streamed.
struct ChoiceOutput {
  engine::TokenChunk tokens;  // every chunk of the choice merged
  engine::Finished finished;  // its end (finished.choice_index is its index)
};

// Builds one request's response objects. A request with n choices (GenerationRequest::n) has
// one "choices" entry per choice in a whole answer, and stream chunks that each carry one
// choice's news under its "index", as OpenAI and vLLM send them.
class ResponseBuilder {
 public:
  ResponseBuilder(const OpenAiRequest& request, ResponseHeader header,
                  const engine::Tokenizer* tokenizer);

  // The whole answer of a request that was not streamed: every choice, in index order.
  nlohmann::ordered_json Complete(const std::vector<ChoiceOutput>& choices);

  // The first chunks of a chat stream, one per choice: the assistant's role, no text yet
  // (OpenAI sends them before the first token). Completions have none.
  std::vector<nlohmann::ordered_json> StreamStart() const;
  // A stream chunk with what arrived for choice delta.choice_index since its last one;
  // `finished` (when not null) ends that choice with its finish_reason. nullopt when there is
  // nothing to send (no text, ids or logprobs, not finished).
  std::optional<nlohmann::ordered_json> StreamChunk(const engine::TokenChunk& delta,
                                                    const engine::Finished* finished);
  // stream_options.include_usage: the last chunk, with no choices and the usage of all.
  nlohmann::ordered_json UsageChunk(const std::vector<engine::Finished>& choices) const;

 private:
  // {id, object, created, model}: `chunk` picks the stream chunk's object name.
  nlohmann::ordered_json Envelope(bool chunk) const;
  nlohmann::ordered_json Choice(const engine::TokenChunk& tokens, const engine::Finished* finished,
                                bool streaming);

  const OpenAiRequest& request_;
  ResponseHeader header_;
  const engine::Tokenizer* tokenizer_;
  std::map<int32_t, LogprobsFormatter> logprobs_;  // by choice: each keeps its text offset
};

// "length" for kLength, "stop" for the model's eos, a stop token or a stop sequence.
const char* OpenAiFinishReason(engine::FinishReason reason);

// The prompt counted once (the choices share its prefill), the completions of every choice.
nlohmann::ordered_json Usage(const std::vector<engine::Finished>& choices);

}  // namespace slotserve::server::http
