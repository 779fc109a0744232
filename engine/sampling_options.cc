#include "engine/sampling_options.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace slotserve::engine {
namespace {

absl::Status Invalid(absl::string_view field, absl::string_view rule, float value) {
  return absl::InvalidArgumentError(absl::StrFormat("%s.%s, got %g", field, rule, value));
}

}  // namespace

absl::Status CheckSamplingOptions(const SamplingOptions& s, absl::string_view field) {
  if (!std::isfinite(s.temperature) || s.temperature < 0.0f) {
    return Invalid(field, "temperature must be >= 0 (0 = greedy)", s.temperature);
  }
  if (s.top_k < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".top_k must be >= 0 (0 = off), got ", s.top_k));
  }
  if (!(s.top_p > 0.0f && s.top_p <= 1.0f)) {
    return Invalid(field, "top_p must be in (0, 1] (1 = off)", s.top_p);
  }
  if (!(s.min_p >= 0.0f && s.min_p <= 1.0f)) {
    return Invalid(field, "min_p must be in [0, 1] (0 = off)", s.min_p);
  }
  if (!std::isfinite(s.repetition_penalty) || s.repetition_penalty <= 0.0f) {
    return Invalid(field, "repetition_penalty must be > 0 (1 = off)", s.repetition_penalty);
  }
  if (!(s.presence_penalty >= -2.0f && s.presence_penalty <= 2.0f)) {
    return Invalid(field, "presence_penalty must be in [-2, 2] (0 = off)", s.presence_penalty);
  }
  if (!(s.frequency_penalty >= -2.0f && s.frequency_penalty <= 2.0f)) {
    return Invalid(field, "frequency_penalty must be in [-2, 2] (0 = off)", s.frequency_penalty);
  }
  return absl::OkStatus();
}

absl::Status CheckLogitBias(std::span<const kernels::BiasedToken> biases, int vocab,
                            absl::string_view field) {
  for (const kernels::BiasedToken& token : biases) {
    if (token.id < 0 || token.id >= vocab) {
      return absl::InvalidArgumentError(absl::StrCat(field, " token ids must be in [0, ", vocab,
                                                     ") (the vocabulary), got ", token.id));
    }
    if (!(token.bias >= -100.0f && token.bias <= 100.0f)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s biases must be in [-100, 100], got %g for token %d", field, token.bias, token.id));
    }
  }
  // Distinct ids: the cuda op shares a row's entries out between threads.
  std::vector<int32_t> ids;
  ids.reserve(biases.size());
  for (const kernels::BiasedToken& token : biases) ids.push_back(token.id);
  std::sort(ids.begin(), ids.end());
  if (const auto twice = std::adjacent_find(ids.begin(), ids.end()); twice != ids.end()) {
    return absl::InvalidArgumentError(absl::StrCat(field, " lists token ", *twice, " twice"));
  }
  return absl::OkStatus();
}

}  // namespace slotserve::engine
