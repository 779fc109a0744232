#include "models/token_sampling.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace slotserve::models {

absl::Status CheckTokenSampling(std::span<const TokenSampling> sampling, size_t rows,
                                size_t out_tokens, const char* call) {
  if (sampling.size() != rows) {
    return absl::InvalidArgumentError(absl::StrCat(
        call, ": ", sampling.size(), " sampling options for ", rows, " slots, expected one each"));
  }
  if (out_tokens != rows) {
    return absl::InvalidArgumentError(
        absl::StrCat(call, ": out_tokens holds ", out_tokens, " ids, expected ", rows));
  }
  for (size_t i = 0; i < sampling.size(); ++i) {
    const TokenSampling& row = sampling[i];
    const char* what = nullptr;
    double value = 0.0;
    if (!std::isfinite(row.temperature) || row.temperature < 0.0f) {
      what = "temperature must be finite and >= 0 (0 = greedy)";
      value = row.temperature;
    } else if (row.top_k < 0) {
      what = "top_k must be >= 0 (0 = off)";
      value = row.top_k;
    } else if (!(row.top_p > 0.0f && row.top_p <= 1.0f)) {
      what = "top_p must be in (0, 1] (1 = off)";
      value = row.top_p;
    } else if (!(row.min_p >= 0.0f && row.min_p <= 1.0f)) {
      what = "min_p must be in [0, 1] (0 = off)";
      value = row.min_p;
    }
    if (what != nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(call, ": sampling[", i, "].", what, ", got ", value));
    }
  }
  return absl::OkStatus();
}

}  // namespace slotserve::models
