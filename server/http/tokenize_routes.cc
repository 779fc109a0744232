#include "server/http/tokenize_routes.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include "absl/strings/str_cat.h"
#include "base/json_document.h"
#include "base/status_macros.h"
#include "server/http/json_params.h"
#include "server/http/openai_errors.h"
#include "server/http/openai_generation.h"
#include "server/http/openai_request.h"
#include "server/prompt_encoding.h"

namespace slotserve::server::http {
namespace {

absl::StatusOr<nlohmann::json> ReadBody(const httplib::Request& request, const ServedModel& model) {
  SLOTSERVE_ASSIGN_OR_RETURN(nlohmann::json body,
                             base::ParseJsonDocument(request.body, "request body"));
  SLOTSERVE_RETURN_IF_ERROR(RequireObject(body));
  if (model.tokenizer == nullptr) {
    return absl::FailedPreconditionError(
        "this model has no tokenizer (tokenizer.model in its directory)");
  }
  return body;
}

// The ids generation would prefill for the body's "prompt" (text, BOS first) or "messages"
// (the chat template rendered, as /v1/chat/completions does); without BOS when
// add_special_tokens is false.
absl::StatusOr<nlohmann::ordered_json> Tokenize(const nlohmann::json& body,
                                                const std::string& raw_body,
                                                const ServedModel& model) {
  JsonParams params(body);
  bool add_special_tokens = true;
  bool return_token_strs = false;
  SLOTSERVE_RETURN_IF_ERROR(params.Bool("add_special_tokens", &add_special_tokens));
  SLOTSERVE_RETURN_IF_ERROR(params.Bool("return_token_strs", &return_token_strs));
  std::vector<int32_t> ids;
  if (body.contains("messages")) {
    nlohmann::json chat = body;
    chat.erase("add_special_tokens");
    chat.erase("return_token_strs");
    // A Jinja chat template prints tool schemas with their keys in the order sent.
    nlohmann::ordered_json ordered;
    if (model.jinja_chat_template != nullptr) {
      ordered = nlohmann::ordered_json::parse(raw_body);
      ordered.erase("add_special_tokens");
      ordered.erase("return_token_strs");
    }
    SLOTSERVE_ASSIGN_OR_RETURN(
        OpenAiRequest parsed,
        ParseChatRequest(chat, model, model.jinja_chat_template != nullptr ? &ordered : nullptr));
    ids = std::move(parsed.generation.prompt_ids);
  } else {
    SLOTSERVE_RETURN_IF_ERROR(CheckModel(params, model));
    std::string prompt;
    SLOTSERVE_RETURN_IF_ERROR(params.String("prompt", &prompt));
    if (!params.Has("prompt")) {
      return ParamError("prompt", "invalid_value", "prompt (a string) or messages is required");
    }
    SLOTSERVE_RETURN_IF_ERROR(params.CheckAllKnown());
    SLOTSERVE_ASSIGN_OR_RETURN(
        ids, EncodeText(prompt, "prompt", model.tokenizer, model.seq2seq ? -1 : model.bos_id));
  }
  if (!add_special_tokens && !ids.empty() && model.bos_id >= 0 && ids.front() == model.bos_id) {
    ids.erase(ids.begin());
  }
  nlohmann::ordered_json answer = {{"count", ids.size()},
                                   {"max_model_len", model.max_prompt_tokens},
                                   {"tokens", ids},
                                   {"token_strs", nullptr}};
  if (return_token_strs) {
    nlohmann::ordered_json pieces = nlohmann::ordered_json::array();
    for (int32_t id : ids) pieces.push_back(std::string(model.tokenizer->IdToPiece(id)));
    answer["token_strs"] = std::move(pieces);
  }
  return answer;
}

absl::StatusOr<nlohmann::ordered_json> Detokenize(const nlohmann::json& body,
                                                  const std::string& /*raw_body*/,
                                                  const ServedModel& model) {
  JsonParams params(body);
  SLOTSERVE_RETURN_IF_ERROR(CheckModel(params, model));
  std::vector<int32_t> ids;
  SLOTSERVE_RETURN_IF_ERROR(params.Int32s("tokens", &ids));
  if (!params.Has("tokens")) {
    return ParamError("tokens", "invalid_value", "tokens (an array of token ids) is required");
  }
  SLOTSERVE_RETURN_IF_ERROR(params.CheckAllKnown());
  const int vocab = model.tokenizer->piece_count();
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= vocab) {
      const std::string path = absl::StrCat("tokens[", i, "]");
      return ParamError(
          path, "invalid_value",
          absl::StrCat(path, " must be a token id in [0, ", vocab, "), got ", ids[i]));
    }
  }
  return nlohmann::ordered_json{{"prompt", model.tokenizer->Decode(ids)}};
}

// Runs `route` on the request's body and answers its result or its error.
template <typename Route>
httplib::Server::Handler Answer(const ServedModel& model, Route route) {
  return [&model, route](const httplib::Request& request, httplib::Response& response) {
    absl::StatusOr<nlohmann::json> body = ReadBody(request, model);
    absl::StatusOr<nlohmann::ordered_json> answer =
        body.ok() ? route(*body, request.body, model)
                  : absl::StatusOr<nlohmann::ordered_json>(body.status());
    if (!answer.ok()) return SendError(answer.status(), response);
    SendJson(*answer, response);
  };
}

}  // namespace

void AddTokenizeRoutes(
    httplib::Server& server, const ServedModel& model,
    const std::function<httplib::Server::Handler(httplib::Server::Handler)>& wrap) {
  server.Post("/tokenize", wrap(Answer(model, Tokenize)));
  server.Post("/detokenize", wrap(Answer(model, Detokenize)));
}

}  // namespace slotserve::server::http
