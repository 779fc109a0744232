#include "server/http/model_object.h"

namespace slotserve::server::http {

nlohmann::ordered_json ModelObject(const ServedModel& model, int64_t created) {
  const models::SamplingOptions sampling = engine::DefaultSampling(model.sampling_defaults);
  return {{"id", model.name},
          {"object", "model"},
          {"created", created},
          {"owned_by", "slotserve"},
          {"max_model_len", model.max_context},
          {"eos_token_ids", model.eos_ids},
          {"default_sampling",
           {{"temperature", sampling.temperature},
            {"top_k", sampling.top_k},
            {"top_p", sampling.top_p},
            {"min_p", sampling.min_p},
            {"repetition_penalty", sampling.repetition_penalty}}}};
}

}  // namespace slotserve::server::http
