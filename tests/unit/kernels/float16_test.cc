// F16 / BF16 conversions: exhaustive round trips, and F32 -> F16 against the compiler's own
// _Float16 conversion (round to nearest even) on random bit patterns and every tie.
#include "kernels/float16.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "gtest/gtest.h"

namespace slotserve::kernels {
namespace {

uint32_t Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float FromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

TEST(Float16Test, EveryHalfSurvivesARoundTrip) {
  for (uint32_t bits = 0; bits < 0x10000u; ++bits) {
    const float wide = HalfToFloat(static_cast<uint16_t>(bits));
    if (std::isnan(wide)) {
      EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(wide)))) << std::hex << bits;
      continue;
    }
    ASSERT_EQ(FloatToHalf(wide), bits) << std::hex << bits;
  }
}

TEST(Float16Test, KnownValues) {
  EXPECT_EQ(HalfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(HalfToFloat(0xc000), -2.0f);
  EXPECT_EQ(HalfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(HalfToFloat(0x0400), std::ldexp(1.0f, -14));  // smallest normal
  EXPECT_EQ(HalfToFloat(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(HalfToFloat(0x7e00)));
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7bff);  // below the halfway point to 2^16
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);  // halfway: ties to even = inf
  EXPECT_EQ(FloatToHalf(1e10f), 0x7c00);
  EXPECT_EQ(FloatToHalf(-1e10f), 0xfc00);
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)), 0x0000);  // tie to even: zero
  EXPECT_EQ(FloatToHalf(std::ldexp(1.5f, -25)), 0x0001);  // above the tie
  EXPECT_EQ(FloatToHalf(std::ldexp(3.0f, -25)), 0x0002);  // 1.5 units: tie to even 2
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie: stays even
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(3.0f, -11)), 0x3c02);  // tie: rounds up to even
  const uint16_t nan = FloatToHalf(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x03ff, 0);
  // A NaN whose payload sits only in the low bits must not become inf.
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(FromBits(0x7f800001u)))));
}

#if defined(__FLT16_MAX__)
TEST(Float16Test, MatchesCompilerConversionOnRandomFloats) {
  std::mt19937 rng(7);
  for (int i = 0; i < 1'000'000; ++i) {
    const float value = FromBits(rng());
    if (std::isnan(value)) continue;
    const _Float16 expected = static_cast<_Float16>(value);
    uint16_t expected_bits;
    std::memcpy(&expected_bits, &expected, sizeof(expected_bits));
    ASSERT_EQ(FloatToHalf(value), expected_bits) << std::hex << Bits(value);
  }
}

TEST(Float16Test, MatchesCompilerConversionOnEveryTie) {
  // Every float exactly halfway between two consecutive halves (including subnormal ones).
  for (uint32_t bits = 0; bits < 0x7c00u; ++bits) {
    const double low = HalfToFloat(static_cast<uint16_t>(bits));
    const double high = HalfToFloat(static_cast<uint16_t>(bits + 1));
    const float tie = static_cast<float>((low + high) / 2);
    const _Float16 expected = static_cast<_Float16>(tie);
    uint16_t expected_bits;
    std::memcpy(&expected_bits, &expected, sizeof(expected_bits));
    ASSERT_EQ(FloatToHalf(tie), expected_bits) << std::hex << bits;
    ASSERT_EQ(FloatToHalf(-tie), expected_bits | 0x8000u) << std::hex << bits;
  }
}
#endif

TEST(BFloat16Test, RoundsToNearestEven) {
  EXPECT_EQ(FloatToBFloat16(1.0f), 0x3f80);
  EXPECT_EQ(FloatToBFloat16(FromBits(0x3f808000u)), 0x3f80);  // tie: stays even
  EXPECT_EQ(FloatToBFloat16(FromBits(0x3f818000u)), 0x3f82);  // tie: rounds up to even
  EXPECT_EQ(FloatToBFloat16(FromBits(0x3f808001u)), 0x3f81);  // above the tie
  EXPECT_EQ(FloatToBFloat16(FromBits(0x7f7fffffu)), 0x7f80);  // max float rounds to inf
  EXPECT_EQ(FloatToBFloat16(-std::numeric_limits<float>::infinity()), 0xff80);
  EXPECT_EQ(FloatToBFloat16(FromBits(0x00000001u)), 0x0000);  // tiny subnormal
  EXPECT_EQ(FloatToBFloat16(FromBits(0x00018000u)), 0x0002);  // subnormal tie to even
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(FloatToBFloat16(FromBits(0x7f800001u)))));
}

TEST(BFloat16Test, PicksTheNearerNeighbourOnRandomFloats) {
  std::mt19937 rng(11);
  for (int i = 0; i < 1'000'000; ++i) {
    const float value = FromBits(rng());
    if (!std::isfinite(value)) continue;
    const uint16_t got = FloatToBFloat16(value);
    const uint16_t down = static_cast<uint16_t>(Bits(value) >> 16);  // truncation (toward zero)
    const double got_value = (got & 0x7fff) == 0x7f80 ? std::copysign(std::ldexp(1.0, 128), value)
                                                      : BFloat16ToFloat(got);
    const double error_got = std::abs(got_value - value);
    const double error_down = std::abs(static_cast<double>(BFloat16ToFloat(down)) - value);
    // Past the largest finite bfloat16 the next step up is inf, which RNE treats as 2^128.
    const uint16_t up = static_cast<uint16_t>(down + 1);
    const double up_value =
        (up & 0x7fff) == 0x7f80 ? std::copysign(std::ldexp(1.0, 128), value) : BFloat16ToFloat(up);
    const double error_up = std::abs(up_value - value);
    ASSERT_LE(error_got, std::min(error_down, error_up)) << std::hex << Bits(value);
    if (error_down == error_up) {
      ASSERT_EQ(got & 1, 0) << std::hex << Bits(value);
    }
  }
}

}  // namespace
}  // namespace slotserve::kernels
