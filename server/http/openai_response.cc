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

nlohmann::ordered_json Usage(const std::vector<engine::Finished>& choices) {
  const int64_t prompt = choices.empty() ? 0 : choices.front().prompt_tokens;
  int64_t completion = 0;
  for (const engine::Finished& finished : choices) completion += finished.generated_tokens;
  return {{"prompt_tokens", prompt},
          {"completion_tokens", completion},
          {"total_tokens", prompt + completion}};
}

std::string LogprobsFormatter::TokenText(int32_t id) const {
  if (tokenizer_ == nullptr) return absl::StrCat("token_id:", id);
  // A byte-fallback piece may be part of a character: shown as U+FFFD, its bytes (chat's
  // "bytes") are exact.
  std::string text;
  base::AppendCompleteUtf8(tokenizer_->TokenBytes(id), /*at_end=*/true, &text);
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
  nlohmann::ordered_json tokens = nlohmann::ordered_json::array(),
                         token_logprobs = nlohmann::ordered_json::array(),
                         top_logprobs = nlohmann::ordered_json::array(),
                         text_offset = nlohmann::ordered_json::array();
  for (const engine::GeneratedTokenLogprobs& token : logprobs) {
    const std::string text = TokenText(token.chosen.id);
    tokens.push_back(text);
    token_logprobs.push_back(ReportedLogprob(token.chosen.logprob));
    // As vLLM: the alternatives and the chosen token, keyed by their text.
    nlohmann::ordered_json top = nlohmann::ordered_json::object();
    for (const engine::TokenLogprob& alternative : token.top) {
      top[TokenText(alternative.id)] = ReportedLogprob(alternative.logprob);
    }
    top[text] = ReportedLogprob(token.chosen.logprob);
    top_logprobs.push_back(std::move(top));
    text_offset.push_back(text_offset_);
    text_offset_ += CodePoints(text);
  }
  return {{"tokens", std::move(tokens)},
          {"token_logprobs", std::move(token_logprobs)},
          {"top_logprobs", std::move(top_logprobs)},
          {"text_offset", std::move(text_offset)}};
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
  return {{"id", header_.id},
          {"object", object},
          {"created", header_.created},
          {"model", header_.model}};
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
  auto formatter = logprobs_.try_emplace(tokens.choice_index, tokenizer_, request_.endpoint).first;
  choice["logprobs"] = formatter->second.Format(tokens.logprobs);
  choice["finish_reason"] =
      finished != nullptr ? nlohmann::ordered_json(OpenAiFinishReason(finished->reason)) : nullptr;
  if (request_.return_token_ids) choice["token_ids"] = tokens.ids;
  return choice;
}

nlohmann::ordered_json ResponseBuilder::Complete(const std::vector<ChoiceOutput>& choices) {
  nlohmann::ordered_json response = Envelope(/*chunk=*/false);
  response["choices"] = nlohmann::ordered_json::array();
  std::vector<engine::Finished> ends;
  for (const ChoiceOutput& choice : choices) {
    engine::TokenChunk tokens = choice.tokens;
    tokens.choice_index = choice.finished.choice_index;
    response["choices"].push_back(Choice(tokens, &choice.finished, /*streaming=*/false));
    ends.push_back(choice.finished);
  }
  response["usage"] = Usage(ends);
  return response;
}

std::vector<nlohmann::ordered_json> ResponseBuilder::StreamStart() const {
  std::vector<nlohmann::ordered_json> chunks;
  if (request_.endpoint != Endpoint::kChat) return chunks;
  // A beam search answers with its n-best as choices (beam_choices.h).
  const engine::GenerationRequest& generation = request_.generation;
  const int64_t choices = generation.beam.enabled() ? generation.beam.n_best : generation.n;
  for (int64_t index = 0; index < std::max<int64_t>(choices, 1); ++index) {
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
  chunk["usage"] = Usage(choices);
  return chunk;
}

}  // namespace slotserve::server::http
