// /v1/chat/completions' prompt when the model directory has its own Jinja chat template
// (jinja_chat_template.h): the request's messages (content a string, a list of text parts or
// null; tool_calls, tool_call_id, name), tools, add_generation_prompt, chat_template_kwargs and
// chat_template (the name of one of the checkpoint's templates: a template's text is refused,
// as a request must not make the server run code of its choosing) rendered as transformers
// renders them, then tokenised. The template writes the special tokens: the server adds no BOS
// of its own (vLLM's rule for chat), and the BOS and EOS tokens' text in the rendered prompt
// become their ids, as a Hugging Face tokenizer parses them.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "server/http/json_params.h"
#include "server/http/openai_request.h"

namespace slotserve::server::http {

// `body` is the request as sent (key order kept: a template prints tool schemas as given);
// `params` is the same body, whose fields read here are marked known. A template that fails
// (raise_exception, an undefined value used) is INVALID_ARGUMENT on "messages" quoting its
// error: a 400, not a 500.
absl::StatusOr<std::vector<int32_t>> RenderJinjaChatPrompt(JsonParams& params,
                                                           const nlohmann::ordered_json& body,
                                                           const ServedModel& model);

}  // namespace slotserve::server::http
