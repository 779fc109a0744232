// Engine events -> OpenAI response objects (the other half of openai_request.h): the whole
// completion, the chunks of a stream (server-sent events), usage, and logprobs in OpenAI's
// two shapes (completions: {tokens, token_logprobs, top_logprobs, text_offset}; chat:
// {content: [{token, logprob, bytes, top_logprobs}]}).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include "engine/generation_events.h"
#include "engine/incremental_detokenizer.h"
#include "engine/tokenizer.h"
#include "server/http/parsed_openai_request.h"

namespace slotserve::server::http {

// What every object of one response repeats.
struct ResponseHeader {
  std::string id;  // "cmpl-..." or "chatcmpl-..."
  int64_t created = 0;
  std::string model;
  std::string system_fingerprint;  // empty: left out
};

// The completions shape of logprobs: four arrays, one entry per token each.
struct CompletionsLogprobs {
  nlohmann::ordered_json tokens = nlohmann::ordered_json::array();
  nlohmann::ordered_json token_logprobs = nlohmann::ordered_json::array();
  nlohmann::ordered_json top_logprobs = nlohmann::ordered_json::array();
  nlohmann::ordered_json text_offset = nlohmann::ordered_json::array();
  nlohmann::ordered_json Json();  // {"tokens": ..., ...}, moving the arrays out
};

// Appends the tokens of `more` (a completions "logprobs" member, or null) to `into`'s.
void AppendCompletionsLogprobs(const nlohmann::ordered_json& more, nlohmann::ordered_json* into);

// Formats logprobs; keeps the text offset of the completions shape across stream chunks.
class LogprobsFormatter {
 public:
  // `tokenizer` may be null: tokens are then named "token_id:<id>". `prompt_ids`: the choice's
  // prompt (it must outlive the formatter), which its generated text continues as the engine's
  // detokenizer primed on it does: after a prompt without text (a seq2seq request with no
  // target prefix, a decoder-only prompt of only BOS) the first generated token starts the
  // sequence and reads without SentencePiece's dummy-prefix space.
  LogprobsFormatter(const engine::Tokenizer* tokenizer, Endpoint endpoint,
                    std::span<const int32_t> prompt_ids)
      : tokenizer_(tokenizer), endpoint_(endpoint), prompt_ids_(prompt_ids) {}

  // The "logprobs" member of a choice for these tokens (null when there are none).
  nlohmann::ordered_json Format(const std::vector<engine::GeneratedTokenLogprobs>& logprobs);
  // Completions' echo: the prompt's tokens in the completions shape, with their scores
  // (TokenChunk::prompt_logprobs). `unscored_first` tokens lead with null for their log
  // probability and alternatives: 1 for a decoder-only prompt, whose first token has nothing
  // before it (scores are for tokens 1..size-1), 0 for an encoder-decoder one, whose decoder
  // read decoder_start_id before it (scores are for every token). Call before Format for the
  // same choice (the text offsets run on).
  nlohmann::ordered_json FormatPrompt(std::span<const int32_t> prompt_ids,
                                      const std::vector<engine::GeneratedTokenLogprobs>& scores,
                                      size_t unscored_first);

 private:
  // One token of the completions shape; `scored` null: null log probability and alternatives.
  // The token and its alternatives read as they would at this place in the sequence, so that
  // the tokens concatenate to the text and the chosen one's key among its alternatives is the
  // key it would have as one of them. Its text offset counts the characters the text has
  // before it: a character split over byte-fallback tokens (each shown as U+FFFD) counts once.
  void AddCompletionsToken(int32_t id, const engine::GeneratedTokenLogprobs* scored,
                           CompletionsLogprobs* out);
  // `at_sequence_start`: no text before it in its sequence (engine::Tokenizer::TokenBytes).
  std::string TokenText(int32_t id, bool at_sequence_start = false) const;
  // Chat's "bytes": the token's exact bytes (empty without a tokenizer).
  nlohmann::ordered_json TokenBytes(int32_t id) const;

  const engine::Tokenizer* tokenizer_;
  Endpoint endpoint_;
  std::span<const int32_t> prompt_ids_;
  int64_t text_offset_ = 0;  // characters of the text before the next token
  // The text so far, as the engine decodes it (with a tokenizer; made on first use, primed on
  // the prompt unless FormatPrompt starts it).
  std::optional<engine::IncrementalDetokenizer> text_;
};

// One choice's whole output, for an answer that is not streamed.
struct ChoiceOutput {
  engine::TokenChunk tokens;  // every chunk of the choice merged
  engine::Finished finished;  // its end (finished.choice_index is its index)
};

// Builds one request's response objects. A request with n choices (GenerationRequest::n) has
// one "choices" entry per choice in a whole answer, and stream chunks that each carry one
// choice's news under its "index", as OpenAI and vLLM send them. A batch of prompts
// (OpenAiRequest::further_prompts) answers prompt p's choice j as choice p * n + j.
class ResponseBuilder {
 public:
  ResponseBuilder(const OpenAiRequest& request, ResponseHeader header,
                  const engine::Tokenizer* tokenizer);

  // The whole answer of a request that was not streamed: every choice, in index order.
  nlohmann::ordered_json Complete(const std::vector<ChoiceOutput>& choices);

  // The first chunks of a chat stream, one per choice: the assistant's role, no text yet
  // (OpenAI sends them before the first token). Completions have none, but for an echo
  // without logprobs: the prompt's text, one chunk per choice.
  std::vector<nlohmann::ordered_json> StreamStart();
  // An echo of prompt `prompt`: one chunk per choice of it with the prompt's text and, when
  // `prompt_scores` is not null, its tokens' logprobs (sent by StreamStart, or once the engine
  // scored the prompt; before any of the choices' own tokens). Empty after the prompt's first
  // call.
  std::vector<nlohmann::ordered_json> EchoChunks(
      int64_t prompt, const std::vector<engine::GeneratedTokenLogprobs>* prompt_scores);
  // The prompt (0 unless a batch) whose choice `choice_index` is.
  int64_t PromptOf(int32_t choice_index) const { return choice_index / ChoiceCount(); }
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

  // Choices of each prompt in the answer: a beam search's n-best (beam_choices.h), best_of's
  // kept n (best_of.h), else n.
  int64_t ChoiceCount() const;
  int64_t PromptCount() const { return 1 + static_cast<int64_t>(request_.further_prompts.size()); }
  const std::vector<int32_t>& PromptIds(int64_t prompt) const;
  // The leading prompt tokens the engine cannot score (LogprobsFormatter::FormatPrompt).
  size_t UnscoredPromptTokens() const;
  const std::string& EchoText(int64_t prompt) const;
  // Choice `index`'s formatter (made on first use).
  LogprobsFormatter& Formatter(int32_t index);
  // The prompt's logprobs for choice `index` (null when `scores` is): before its own tokens'.
  nlohmann::ordered_json EchoLogprobs(int32_t index,
                                      const std::vector<engine::GeneratedTokenLogprobs>* scores);
  // One choice's echo: the prompt's text, with its logprobs when `scores` is not null.
  nlohmann::ordered_json EchoChoice(int32_t index,
                                    const std::vector<engine::GeneratedTokenLogprobs>* scores);

  const OpenAiRequest& request_;
  ResponseHeader header_;
  const engine::Tokenizer* tokenizer_;
  std::map<int32_t, LogprobsFormatter> logprobs_;  // by choice: each keeps its text offset
  std::vector<bool> echo_streamed_;                // by prompt
};

// "length" for kLength, "stop" for the model's eos, a stop token or a stop sequence.
const char* OpenAiFinishReason(engine::FinishReason reason);

// Each prompt counted once (its choices share its prefill; prompt p's are choices
// p * choices_per_prompt ..), the completions of every choice.
nlohmann::ordered_json Usage(const std::vector<engine::Finished>& choices,
                             int64_t choices_per_prompt = 1 << 30);

}  // namespace slotserve::server::http
