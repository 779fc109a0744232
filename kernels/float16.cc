// IEEE binary16 and bfloat16 conversions, exact in both directions (F16/BF16 -> F32 is exact;
// F32 -> F16/BF16 rounds to nearest, ties to even), including subnormals, inf and NaN.
#include "kernels/float16.h"

namespace slotserve::kernels {
namespace {

uint32_t FloatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float BitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// Shifts `value` right by `shift` bits, rounding to nearest with ties to even.
uint32_t ShiftRightRoundEven(uint32_t value, int shift) {
  const uint32_t truncated = value >> shift;
  const uint32_t remainder = value & ((1u << shift) - 1u);
  const uint32_t halfway = 1u << (shift - 1);
  if (remainder > halfway || (remainder == halfway && (truncated & 1u) != 0)) {
    return truncated + 1u;
  }
  return truncated;
}

}  // namespace

float HalfToFloat(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1fu) {  // inf or NaN: keep the payload bits
    return BitsToFloat(sign | 0x7f800000u | (mantissa << 13));
  }
  if (exponent == 0) {
    if (mantissa == 0) return BitsToFloat(sign);
    // Subnormal: mantissa * 2^-24, exactly representable as a normal float.
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sign != 0 ? -magnitude : magnitude;
  }
  return BitsToFloat(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

uint16_t FloatToHalf(float value) {
  const uint32_t bits = FloatBits(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) {  // NaN: quiet, keep the top payload bits
    return static_cast<uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  }
  if (magnitude >= 0x47800000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 2^16: inf
  if (magnitude >= 0x38800000u) {
    // Normal half range (>= 2^-14): rebias the exponent, drop 13 mantissa bits with rounding.
    // A carry out of the mantissa correctly bumps the exponent (up to inf at 65520).
    const uint32_t rebiased = magnitude - (112u << 23);
    return static_cast<uint16_t>(sign | ShiftRightRoundEven(rebiased, 13));
  }
  if (magnitude <= 0x33000000u) return sign;  // <= 2^-25 rounds to (signed) zero
  // Subnormal half: value = significand * 2^(e - 150); the half's unit is 2^-24.
  const uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
  const int shift = 126 - static_cast<int>(magnitude >> 23);
  return static_cast<uint16_t>(sign | ShiftRightRoundEven(significand, shift));
}

uint16_t FloatToBFloat16(float value) {
  const uint32_t bits = FloatBits(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) {  // NaN: quiet it so truncation cannot make inf
    return static_cast<uint16_t>((bits >> 16) | 0x40u);
  }
  return static_cast<uint16_t>(ShiftRightRoundEven(bits, 16));
}

}  // namespace slotserve::kernels
