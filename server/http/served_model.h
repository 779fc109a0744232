// What the HTTP API's request parsers (openai_request.h, openai_prompts.h, openai_source.h) and
// routes need to know about the model being served.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/sampling_defaults.h"
#include "engine/tokenizer.h"
#include "server/http/chat_template.h"

namespace slotserve::server::http {

class JinjaChatTemplate;

struct ServedModel {
  std::string name;                              // what "model" must say, when given
  const engine::Tokenizer* tokenizer = nullptr;  // null: text prompts are refused
  int bos_id = -1;                               // prepended to text prompts (< 0: none)
  const ChatTemplate* chat_template = nullptr;   // required for chat
  // Encoder-decoder models (openai_source.h): "source" is required, "prompt" optional.
  bool seq2seq = false;
  int eos_id = -1;                // ends a text source
  int64_t max_prompt_tokens = 0;  // --max-prompt-tokens: /tokenize's max_model_len
  // Every answer's system_fingerprint (system_fingerprint.h); empty: left out.
  std::string system_fingerprint;
  // /v1/models' "root": the model directory's name (the served name may differ).
  std::string root;
  // generation_config.json's defaults for the sampling parameters a request leaves out, and
  // every id that ends generation (engine::Scheduler::eos_ids): GET /v1/models shows both.
  engine::SamplingDefaults sampling_defaults = {};
  std::vector<int32_t> eos_ids = {};
  // engine::Scheduler::max_context: GET /v1/models' max_model_len (vLLM's name).
  int64_t max_context = 0;
  // The checkpoint's own chat template (jinja_chat_template.h), used instead of chat_template
  // when not null.
  std::shared_ptr<const JinjaChatTemplate> jinja_chat_template;
};

}  // namespace slotserve::server::http
