#include "server/http/model_object.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace slotserve::server::http {

nlohmann::ordered_json ModelObject(const ServedModel& model, int64_t created) {
  const engine::SamplingOptions sampling = engine::DefaultSampling(model.sampling_defaults);
  // One permission object saying what a key holder may do with the model (vLLM's shape).
  const nlohmann::ordered_json permission = {{"id", absl::StrCat("modelperm-", model.name)},
                                             {"object", "model_permission"},
                                             {"created", created},
                                             {"allow_create_engine", false},
                                             {"allow_sampling", true},
                                             {"allow_logprobs", true},
                                             {"allow_search_indices", false},
                                             {"allow_view", true},
                                             {"allow_fine_tuning", false},
                                             {"organization", "*"},
                                             {"group", nullptr},
                                             {"is_blocking", false}};
  // The longest prompt a request may send: the model's context (or the served one), capped by
  // --max-prompt-tokens.
  const int64_t max_model_len = model.max_context > 0
                                    ? std::min(model.max_context, model.max_prompt_tokens)
                                    : model.max_prompt_tokens;
  return {{"id", model.name},
          {"object", "model"},
          {"created", created},
          {"owned_by", "slotserve"},
          {"root", model.root.empty() ? model.name : model.root},
          {"parent", nullptr},
          {"max_model_len", max_model_len},
          {"permission", nlohmann::ordered_json::array({permission})},
          {"eos_token_ids", model.eos_ids},
          {"default_sampling",
           {{"temperature", sampling.temperature},
            {"top_k", sampling.top_k},
            {"top_p", sampling.top_p},
            {"min_p", sampling.min_p},
            {"repetition_penalty", sampling.repetition_penalty}}}};
}

}  // namespace slotserve::server::http
