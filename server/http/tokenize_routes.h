// vLLM's tokenizer routes beside the OpenAI API, for clients that count or inspect tokens
// before they send a prompt:
//   POST /tokenize   {"prompt": text} or {"messages": [...]} (the chat template rendered, as
//                    /v1/chat/completions would), with "add_special_tokens" (BOS; default
//                    true for a prompt, false for messages, whose template places it) and
//                    "return_token_strs" -> {"count", "max_model_len", "tokens", "token_strs"}
//   POST /detokenize {"tokens": [ids]} -> {"prompt": text}
// Both take "model" as the generation routes do. "max_model_len" is the longest prompt the
// server accepts (--max-prompt-tokens). Errors are OpenAI's JSON naming the parameter.
#pragma once

#include <functional>

#include <httplib.h>
#include "server/http/served_model.h"

namespace slotserve::server::http {

// Adds the routes to `server`, each wrapped by `wrap` (authentication). `model` must outlive
// the server's handlers; its tokenizer may be null (both routes then refuse with 400).
void AddTokenizeRoutes(
    httplib::Server& server, const ServedModel& model,
    const std::function<httplib::Server::Handler(httplib::Server::Handler)>& wrap);

}  // namespace slotserve::server::http
