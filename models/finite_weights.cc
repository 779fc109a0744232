#include "models/finite_weights.h"

#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace slotserve::models {
namespace {

// An IEEE value is NaN or infinite exactly when its exponent bits are all ones; it is NaN
// when, in addition, any mantissa bit is set.
struct ExponentLayout {
  uint32_t exponent_mask;
  uint32_t mantissa_mask;
};

ExponentLayout LayoutOf(kernels::DType dtype) {
  switch (dtype) {
    case kernels::DType::kF32:
      return {0x7F800000u, 0x007FFFFFu};
    case kernels::DType::kF16:
      return {0x7C00u, 0x03FFu};
    case kernels::DType::kBF16:
      return {0x7F80u, 0x007Fu};
    case kernels::DType::kI8:
      return {0, 0};  // integers: always finite (their F32 row scales are checked as F32)
  }
  return {0, 0};
}

template <typename Bits>
int64_t FirstNonFinite(const uint8_t* data, int64_t count, uint32_t exponent_mask) {
  for (int64_t i = 0; i < count; ++i) {
    Bits bits;
    std::memcpy(&bits, data + i * static_cast<int64_t>(sizeof(Bits)), sizeof(Bits));
    if ((bits & exponent_mask) == exponent_mask) return i;
  }
  return -1;
}

}  // namespace

absl::Status CheckWeightsAreFinite(const SafetensorsFile& file) {
  for (const auto& [name, tensor] : file.tensors()) {
    SLOTSERVE_RETURN_IF_ERROR(CheckTensorIsFinite(file.source(), tensor));
  }
  return absl::OkStatus();
}

absl::Status CheckTensorIsFinite(const std::string& source, const SafetensorsTensor& tensor) {
  const std::string& name = tensor.name;
  if (tensor.dtype == kernels::DType::kI8) {
    // Integers are always finite, but the format keeps them symmetric: the int8 x int8 kernels
    // (kernels/cpu/int8_dot_linear.h) negate weights, and -128 has no negation in int8.
    const auto* values = reinterpret_cast<const int8_t*>(tensor.data);
    for (int64_t i = 0; i < tensor.num_elements(); ++i) {
      if (values[i] == -128) {
        return absl::InvalidArgumentError(
            absl::StrCat(source, ": tensor ", name, " holds -128 at element ", i,
                         ": int8 weights must lie in [-127, 127] (q = round(w / scale), scale = "
                         "max |w| / 127)"));
      }
    }
    return absl::OkStatus();
  }
  const ExponentLayout layout = LayoutOf(tensor.dtype);
  const int64_t count = tensor.num_elements();
  const bool wide = tensor.dtype == kernels::DType::kF32;
  const int64_t bad = wide ? FirstNonFinite<uint32_t>(tensor.data, count, layout.exponent_mask)
                           : FirstNonFinite<uint16_t>(tensor.data, count, layout.exponent_mask);
  if (bad < 0) return absl::OkStatus();
  uint32_t bits = 0;
  if (wide) {
    std::memcpy(&bits, tensor.data + bad * 4, 4);
  } else {
    uint16_t half;
    std::memcpy(&half, tensor.data + bad * 2, 2);
    bits = half;
  }
  const char* what = (bits & layout.mantissa_mask) != 0 ? "NaN"
                     : tensor.ElementAsFloat32(bad) > 0 ? "+infinity"
                                                        : "-infinity";
  return absl::InvalidArgumentError(absl::StrCat(
      source, ": tensor ", name, " holds ", what, " at element ", bad, " (of ", count, ", ",
      kernels::DTypeName(tensor.dtype), "); every weight must be a finite number"));
}

}  // namespace slotserve::models
