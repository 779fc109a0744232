#include "engine/sampling_defaults.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace slotserve::engine {
namespace {

template <typename T>
void Default(const std::optional<T>& value, bool set, T* field) {
  if (!set && value.has_value()) *field = *value;
}

}  // namespace

SamplingDefaults SamplingDefaultsFrom(const models::GenerationConfig& config) {
  SamplingDefaults defaults{.temperature = config.temperature,
                            .top_k = config.top_k,
                            .top_p = config.top_p,
                            .min_p = config.min_p,
                            .repetition_penalty = config.repetition_penalty};
  if (config.do_sample == false) {
    defaults.temperature = 0.0f;
    defaults.top_k.reset();
    defaults.top_p.reset();
    defaults.min_p.reset();
  }
  return defaults;
}

SamplingOptions DefaultSampling(const SamplingDefaults& defaults) {
  GenerationRequest request;
  ApplySamplingDefaults(defaults, {}, &request);
  return request.sampling;
}

std::string DescribeSamplingDefaults(const SamplingDefaults& defaults) {
  std::vector<std::string> parts;
  auto describe = [&](const char* name, const auto& value) {
    if (value.has_value()) parts.push_back(absl::StrCat(name, " ", *value));
  };
  describe("temperature", defaults.temperature);
  describe("top_k", defaults.top_k);
  describe("top_p", defaults.top_p);
  describe("min_p", defaults.min_p);
  describe("repetition_penalty", defaults.repetition_penalty);
  return parts.empty() ? "none" : absl::StrJoin(parts, ", ");
}

void ApplySamplingDefaults(const SamplingDefaults& defaults, const SampledFieldsSet& set,
                           GenerationRequest* request) {
  if (request->beam.enabled()) return;
  SamplingOptions& sampling = request->sampling;
  Default(defaults.temperature, set.temperature, &sampling.temperature);
  Default(defaults.top_k, set.top_k, &sampling.top_k);
  Default(defaults.top_p, set.top_p, &sampling.top_p);
  Default(defaults.min_p, set.min_p, &sampling.min_p);
  Default(defaults.repetition_penalty, set.repetition_penalty, &sampling.repetition_penalty);
}

}  // namespace slotserve::engine
