#include "models/int8_quantisation.h"

#include <algorithm>
#include <cmath>

namespace slotserve::models {

bool QuantisedInInt8(std::string_view name, const std::vector<int64_t>& shape) {
  constexpr std::string_view kSuffix = ".weight";
  return shape.size() == 2 && name.size() > kSuffix.size() &&
         name.substr(name.size() - kSuffix.size()) == kSuffix;
}

Int8Rows QuantiseRows(const std::vector<float>& weights, int64_t rows, int64_t cols) {
  Int8Rows out;
  out.values.resize(static_cast<size_t>(rows * cols));
  out.scales.resize(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = weights.data() + r * cols;
    double largest = 0.0;
    for (int64_t c = 0; c < cols; ++c) largest = std::max(largest, std::abs(double{row[c]}));
    // The stored (F32) scale divides, so every dequantised weight q * scale is within scale / 2
    // of the original (dividing by the unrounded quotient can miss that by a rounding).
    out.scales[r] = static_cast<float>(largest / 127.0);
    const double scale = out.scales[r];
    for (int64_t c = 0; c < cols; ++c) {
      // std::nearbyint rounds half to even in the default rounding mode, as torch.round does.
      const double q = scale > 0.0 ? std::nearbyint(row[c] / scale) : 0.0;
      out.values[r * cols + c] = static_cast<int8_t>(std::clamp(q, -127.0, 127.0));
    }
  }
  return out;
}

}  // namespace slotserve::models
