// Scalar F16 / BF16 <-> F32 conversions used on the host (loader, reference kernels).
#pragma once

#include <cstdint>
#include <cstring>

namespace slotserve::kernels {

float HalfToFloat(uint16_t bits);
uint16_t FloatToHalf(float value);  // round to nearest even

inline float BFloat16ToFloat(uint16_t bits) {
  uint32_t word = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &word, sizeof(value));
  return value;
}

uint16_t FloatToBFloat16(float value);  // round to nearest even

}  // namespace slotserve::kernels
