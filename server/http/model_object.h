// The served model as GET /v1/models and /v1/models/{id} describe it: OpenAI's fields (id,
// object, created, owned_by), vLLM's "root" (the model directory's name), "parent" (null: no
// fine-tunes here), "permission" and "max_model_len" (the longest prompt a request may send: the
// served context, capped by --max-prompt-tokens), plus what a client of a Hugging Face directory wants to know
// before it sends a request: "eos_token_ids" (every id that ends generation) and
// "default_sampling" (what temperature, top_k, top_p, min_p and repetition_penalty a request
// that leaves them out gets: the built-in defaults, or generation_config.json's).
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>
#include "server/http/openai_request.h"

namespace slotserve::server::http {

nlohmann::ordered_json ModelObject(const ServedModel& model, int64_t created);

}  // namespace slotserve::server::http
