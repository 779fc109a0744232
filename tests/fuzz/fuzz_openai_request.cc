// libFuzzer target: an HTTP request body -> the OpenAI parsers (completions, or chat when the
// first byte is odd) with the bundled tokenizer and the default chat template -> the engine's
// ValidateGenerationRequest for each prompt of a batch, as a server with the bundled model's
// limits would run them; every refusal becomes OpenAI's error body (ToApiError).
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/json_document.h"
#include "engine/request_validation.h"
#include "server/http/chat_template.h"
#include "server/http/openai_errors.h"
#include "server/http/openai_request.h"
#include "tests/fuzz/bundled_tokenizer.h"
#include "tests/fuzz/server_limits.h"

namespace {

using slotserve::server::http::ChatTemplate;
using slotserve::server::http::OpenAiRequest;

const slotserve::server::http::ServedModel& Model() {
  static const ChatTemplate* chat_template = new ChatTemplate(ChatTemplate::Default());
  static const slotserve::server::http::ServedModel model = [] {
    slotserve::server::http::ServedModel served;
    served.name = "kjv-abc-m32";
    served.tokenizer = slotserve::fuzz::BundledTokenizer();
    served.bos_id = served.tokenizer->bos_id();
    served.chat_template = chat_template;
    served.max_prompt_tokens = 8192;
    return served;
  }();
  return model;
}

// Each prompt's engine request, as openai_generation.cc submits it.
void Validate(const OpenAiRequest& request) {
  const slotserve::engine::RequestLimits limits = slotserve::fuzz::ServerLimits();
  slotserve::engine::GenerationRequest generation = request.generation;
  slotserve::server::http::ToApiError(
      slotserve::engine::ValidateGenerationRequest(generation, limits), request.names);
  for (const OpenAiRequest::FurtherPrompt& prompt : request.further_prompts) {
    generation.prompt_ids = prompt.ids;
    slotserve::server::http::ToApiError(
        slotserve::engine::ValidateGenerationRequest(generation, limits), request.names);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool chat = (data[0] & 1) != 0;
  const std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  absl::StatusOr<nlohmann::json> json = slotserve::base::ParseJsonDocument(body, "body");
  if (!json.ok()) return 0;
  absl::StatusOr<OpenAiRequest> request =
      chat ? slotserve::server::http::ParseChatRequest(*json, Model())
           : slotserve::server::http::ParseCompletionRequest(*json, Model());
  if (!request.ok()) {
    slotserve::server::http::ToApiError(request.status());
    return 0;
  }
  Validate(*request);
  return 0;
}
