#include "server/http/openai_response.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/utf8.h"

namespace slotserve::server::http {
namespace {

// JSON has no -inf; vLLM reports such log probabilities as -9999.
double ReportedLogprob(float logprob) {
  return std::isnan(logprob) ? -9999.0 : std::max(static_cast<double>(logprob), -9999.0);
}

int64_t CodePoints(const std::string& text) {
  return std::count_if(text.begin(), text.end(),
                       [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
}

}  // namespace

const char* OpenAiFinishReason(engine::FinishReason reason) {
  return reason == engine::FinishReason::kLength ? "length" : "stop";
}

nlohmann::ordered_json Usage(const std::vector<engine::Finished>& choices,
                             int64_t choices_per_prompt) {
  std::map<int64_t, int64_t> prompt_tokens;  // by prompt
  int64_t completion = 0;
  for (const engine::Finished& finished : choices) {
    prompt_tokens.try_emplace(finished.choice_index / choices_per_prompt, finished.prompt_tokens);
    completion += finished.generated_tokens;
  }
  int64_t prompt = 0;
  for (const auto& [index, tokens] : prompt_tokens) prompt += tokens;
  return {{"prompt_tokens", prompt},
          {"completion_tokens", completion},
          {"total_tokens", prompt + completion}};
}

std::string LogprobsFormatter::TokenText(int32_t id, bool at_sequence_start) const {
  if (tokenizer_ == nullptr) return absl::StrCat("token_id:", id);
  // A byte-fallback piece may be part of a character: shown as U+FFFD, its bytes (chat's
  // "bytes") are exact.
  std::string text;
  base::AppendCompleteUtf8(tokenizer_->TokenBytes(id, at_sequence_start), /*at_end=*/true, &text);
  return text;
}

nlohmann::ordered_json LogprobsFormatter::TokenBytes(int32_t id) const {
  nlohmann::ordered_json bytes = nlohmann::ordered_json::array();
  if (tokenizer_ == nullptr) return bytes;
  for (char c : tokenizer_->TokenBytes(id)) bytes.push_back(static_cast<unsigned char>(c));
  return bytes;
}

nlohmann::ordered_json LogprobsFormatter::Format(
    const std::vector<engine::GeneratedTokenLogprobs>& logprobs) {
  if (logprobs.empty()) return nullptr;
  if (endpoint_ == Endpoint::kChat) {
    nlohmann::ordered_json content = nlohmann::ordered_json::array();
    for (const engine::GeneratedTokenLogprobs& token : logprobs) {
      nlohmann::ordered_json top = nlohmann::ordered_json::array();
      for (const engine::TokenLogprob& alternative : token.top) {
        top.push_back({{"token", TokenText(alternative.id)},
                       {"logprob", ReportedLogprob(alternative.logprob)},
                       {"bytes", TokenBytes(alternative.id)}});
      }
      content.push_back({{"token", TokenText(token.chosen.id)},
                         {"logprob", ReportedLogprob(token.chosen.logprob)},
                         {"bytes", TokenBytes(token.chosen.id)},
                         {"top_logprobs", std::move(top)}});
    }
    return {{"content", std::move(content)}};
  }
  CompletionsLogprobs out;
  for (const engine::GeneratedTokenLogprobs& token : logprobs) {
    AddCompletionsToken(token.chosen.id, &token, &out);
  }
  return out.Json();
}

nlohmann::ordered_json LogprobsFormatter::FormatPrompt(
    std::span<const int32_t> prompt_ids, const std::vector<engine::GeneratedTokenLogprobs>& scores,
    size_t unscored_first) {
  CompletionsLogprobs out;
  // The prompt starts its sequence: its first token with text drops SentencePiece's
  // dummy-prefix space, as the prompt decodes, so that the offsets index the echoed text.
  if (tokenizer_ != nullptr) text_.emplace(tokenizer_);
  for (size_t i = 0; i < prompt_ids.size(); ++i) {
    // Token i is scored by scores[i - unscored_first].
    const engine::GeneratedTokenLogprobs* score =
        i >= unscored_first && i - unscored_first < scores.size() ? &scores[i - unscored_first]
                                                                  : nullptr;
    AddCompletionsToken(prompt_ids[i], score, &out);
  }
  return out.Json();
}

void LogprobsFormatter::AddCompletionsToken(int32_t id,
                                            const engine::GeneratedTokenLogprobs* scored,
                                            CompletionsLogprobs* out) {
  if (tokenizer_ != nullptr && !text_.has_value()) {
    text_.emplace(tokenizer_);
    text_->Prime(prompt_ids_);
  }
  const bool at_sequence_start = text_.has_value() && text_->at_sequence_start();
  const std::string text = TokenText(id, at_sequence_start);
  out->tokens.push_back(text);
  if (scored == nullptr) {
    out->token_logprobs.push_back(nullptr);
    out->top_logprobs.push_back(nullptr);
  } else {
    out->token_logprobs.push_back(ReportedLogprob(scored->chosen.logprob));
    // As vLLM: the alternatives and the chosen token, keyed by their text.
    nlohmann::ordered_json top = nlohmann::ordered_json::object();
    for (const engine::TokenLogprob& alternative : scored->top) {
      top[TokenText(alternative.id, at_sequence_start)] = ReportedLogprob(alternative.logprob);
    }
    top[text] = ReportedLogprob(scored->chosen.logprob);
    out->top_logprobs.push_back(std::move(top));
  }
  out->text_offset.push_back(text_offset_);
  // The characters this token completes: none for the first bytes of a split character, which
  // the token completing it then adds.
  text_offset_ += CodePoints(text_.has_value() ? text_->Push(id) : text);
}

nlohmann::ordered_json CompletionsLogprobs::Json() {
  return {{"tokens", std::move(tokens)},
          {"token_logprobs", std::move(token_logprobs)},
          {"top_logprobs", std::move(top_logprobs)},
          {"text_offset", std::move(text_offset)}};
}

void AppendCompletionsLogprobs(const nlohmann::ordered_json& more, nlohmann::ordered_json* into) {
  if (more.is_null()) return;
  if (into->is_null()) {
    *into = more;
    return;
  }
  for (const char* key : {"tokens", "token_logprobs", "top_logprobs", "text_offset"}) {
    for (const nlohmann::ordered_json& value : more[key]) (*into)[key].push_back(value);
  }
}

ResponseBuilder::ResponseBuilder(const OpenAiRequest& request, ResponseHeader header,
                                 const engine::Tokenizer* tokenizer)
    : request_(request), header_(std::move(header)), tokenizer_(tokenizer) {}

nlohmann::ordered_json ResponseBuilder::Envelope(bool chunk) const {
  const bool chat = request_.endpoint == Endpoint::kChat;
  // Completions call both the whole answer and a chunk "text_completion".
  const char* object = !chat   ? "text_completion"
                       : chunk ? "chat.completion.chunk"
                               : "chat.completion";
  nlohmann::ordered_json envelope = {{"id", header_.id},
                                     {"object", object},
                                     {"created", header_.created},
                                     {"model", header_.model}};
  if (!header_.system_fingerprint.empty()) {
    envelope["system_fingerprint"] = header_.system_fingerprint;
  }
  return envelope;
}

nlohmann::ordered_json ResponseBuilder::Choice(const engine::TokenChunk& tokens,
                                               const engine::Finished* finished, bool streaming) {
  nlohmann::ordered_json choice = {{"index", tokens.choice_index}};
  if (request_.endpoint == Endpoint::kCompletions) {
    choice["text"] = tokens.text;
  } else if (streaming) {
    choice["delta"] = tokens.text.empty() ? nlohmann::ordered_json::object()
                                          : nlohmann::ordered_json{{"content", tokens.text}};
  } else {
    choice["message"] = {{"role", "assistant"}, {"content", tokens.text}};
  }
  choice["logprobs"] = request_.hide_logprobs
                           ? nlohmann::ordered_json(nullptr)
                           : Formatter(tokens.choice_index).Format(tokens.logprobs);
  choice["finish_reason"] =
      finished != nullptr ? nlohmann::ordered_json(OpenAiFinishReason(finished->reason)) : nullptr;
  if (request_.return_token_ids) choice["token_ids"] = tokens.ids;
  return choice;
}

nlohmann::ordered_json ResponseBuilder::Complete(const std::vector<ChoiceOutput>& choices) {
  nlohmann::ordered_json response = Envelope(/*chunk=*/false);
  response["choices"] = nlohmann::ordered_json::array();
  // An echo's prompt scores arrive once per prompt, with its first choice
  // (TokenChunk::prompt_logprobs).
  std::map<int64_t, const std::vector<engine::GeneratedTokenLogprobs>*> prompt_scores;
  for (const ChoiceOutput& choice : choices) {
    if (choice.tokens.prompt_logprobs.has_value()) {
      prompt_scores[PromptOf(choice.finished.choice_index)] = &*choice.tokens.prompt_logprobs;
    }
  }
  std::vector<engine::Finished> ends;
  for (const ChoiceOutput& choice : choices) {
    engine::TokenChunk tokens = choice.tokens;
    tokens.choice_index = choice.finished.choice_index;
    if (!request_.echo) {
      response["choices"].push_back(Choice(tokens, &choice.finished, /*streaming=*/false));
    } else {
      // The prompt's logprobs first: the choice's text offsets run on from them.
      const int64_t prompt = PromptOf(tokens.choice_index);
      const auto scores = prompt_scores.find(prompt);
      nlohmann::ordered_json logprobs = EchoLogprobs(
          tokens.choice_index, scores != prompt_scores.end() ? scores->second : nullptr);
      nlohmann::ordered_json own = Choice(tokens, &choice.finished, /*streaming=*/false);
      own["text"] = EchoText(prompt) + own["text"].get<std::string>();
      AppendCompletionsLogprobs(own["logprobs"], &logprobs);
      own["logprobs"] = std::move(logprobs);
      response["choices"].push_back(std::move(own));
    }
    ends.push_back(choice.finished);
  }
  response["usage"] = Usage(ends, ChoiceCount());
  return response;
}

int64_t ResponseBuilder::ChoiceCount() const {
  if (request_.keep_best > 0) return request_.keep_best;
  const engine::GenerationRequest& generation = request_.generation;
  return std::max<int64_t>(generation.beam.enabled() ? generation.beam.n_best : generation.n, 1);
}

const std::vector<int32_t>& ResponseBuilder::PromptIds(int64_t prompt) const {
  return prompt == 0 ? request_.generation.prompt_ids : request_.further_prompts[prompt - 1].ids;
}

const std::string& ResponseBuilder::EchoText(int64_t prompt) const {
  return prompt == 0 ? request_.echo_text : request_.further_prompts[prompt - 1].echo_text;
}

LogprobsFormatter& ResponseBuilder::Formatter(int32_t index) {
  return logprobs_.try_emplace(index, tokenizer_, request_.endpoint, PromptIds(PromptOf(index)))
      .first->second;
}

nlohmann::ordered_json ResponseBuilder::EchoLogprobs(
    int32_t index, const std::vector<engine::GeneratedTokenLogprobs>* scores) {
  if (scores == nullptr) return nullptr;
  return Formatter(index).FormatPrompt(PromptIds(PromptOf(index)), *scores, UnscoredPromptTokens());
}

size_t ResponseBuilder::UnscoredPromptTokens() const {
  return request_.generation.source_ids.empty() ? 1 : 0;
}

nlohmann::ordered_json ResponseBuilder::EchoChoice(
    int32_t index, const std::vector<engine::GeneratedTokenLogprobs>* scores) {
  return {{"index", index},
          {"text", EchoText(PromptOf(index))},
          {"logprobs", EchoLogprobs(index, scores)},
          {"finish_reason", nullptr}};
}

std::vector<nlohmann::ordered_json> ResponseBuilder::EchoChunks(
    int64_t prompt, const std::vector<engine::GeneratedTokenLogprobs>* prompt_scores) {
  std::vector<nlohmann::ordered_json> chunks;
  echo_streamed_.resize(PromptCount(), false);
  if (prompt < 0 || prompt >= PromptCount() || echo_streamed_[prompt]) return chunks;
  echo_streamed_[prompt] = true;
  const int64_t first = prompt * ChoiceCount();
  for (int64_t index = first; index < first + ChoiceCount(); ++index) {
    nlohmann::ordered_json chunk = Envelope(/*chunk=*/true);
    chunk["choices"] =
        nlohmann::ordered_json::array({EchoChoice(static_cast<int32_t>(index), prompt_scores)});
    if (request_.include_usage) chunk["usage"] = nullptr;
    chunks.push_back(std::move(chunk));
  }
  return chunks;
}

std::vector<nlohmann::ordered_json> ResponseBuilder::StreamStart() {
  if (request_.endpoint != Endpoint::kChat) {
    if (!request_.echo) return {};
    // Echo without logprobs, or of a prompt with nothing to score (one token; none after a
    // seq2seq source): now. Else once the engine has scored the prompt (EchoChunks from the
    // stream).
    static const std::vector<engine::GeneratedTokenLogprobs> kNoScores;
    std::vector<nlohmann::ordered_json> chunks;
    for (int64_t prompt = 0; prompt < PromptCount(); ++prompt) {
      std::vector<nlohmann::ordered_json> echo;
      if (!request_.generation.logprobs.prompt) {
        echo = EchoChunks(prompt, nullptr);
      } else if (PromptIds(prompt).size() <= UnscoredPromptTokens()) {
        echo = EchoChunks(prompt, &kNoScores);
      }
      for (nlohmann::ordered_json& chunk : echo) chunks.push_back(std::move(chunk));
    }
    return chunks;
  }
  std::vector<nlohmann::ordered_json> chunks;
  // A beam search answers with its n-best as choices (beam_choices.h).
  for (int64_t index = 0; index < ChoiceCount(); ++index) {
    nlohmann::ordered_json chunk = Envelope(/*chunk=*/true);
    chunk["choices"] =
        nlohmann::ordered_json::array({{{"index", index},
                                        {"delta", {{"role", "assistant"}, {"content", ""}}},
                                        {"logprobs", nullptr},
                                        {"finish_reason", nullptr}}});
    if (request_.include_usage) chunk["usage"] = nullptr;
    chunks.push_back(std::move(chunk));
  }
  return chunks;
}

std::optional<nlohmann::ordered_json> ResponseBuilder::StreamChunk(
    const engine::TokenChunk& delta, const engine::Finished* finished) {
  const bool has_tokens = !delta.text.empty() || !delta.logprobs.empty() ||
                          (request_.return_token_ids && !delta.ids.empty());
  if (!has_tokens && finished == nullptr) return std::nullopt;
  nlohmann::ordered_json chunk = Envelope(/*chunk=*/true);
  chunk["choices"] = nlohmann::ordered_json::array({Choice(delta, finished, /*streaming=*/true)});
  // OpenAI: with include_usage, every chunk but the last has "usage": null.
  if (request_.include_usage) chunk["usage"] = nullptr;
  return chunk;
}

nlohmann::ordered_json ResponseBuilder::UsageChunk(
    const std::vector<engine::Finished>& choices) const {
  nlohmann::ordered_json chunk = Envelope(/*chunk=*/true);
  chunk["choices"] = nlohmann::ordered_json::array();
  chunk["usage"] = Usage(choices, ChoiceCount());
  return chunk;
}

}  // namespace slotserve::server::http
