// kernels/cpu/cpu_features.h: the optional instruction sets follow the CPU unless
// SLOTSERVE_CPU_ISA=avx2 caps them. ctest runs this file's tests twice: as part of the whole
// binary (no cap) and as unit.CpuFeaturesCappedToAvx2 with the variable set (tests/unit/kernels/
// CMakeLists.txt), where a CPU with AVX-512 must report none.
#include "kernels/cpu/cpu_features.h"

#include <cstdlib>
#include <cstring>

#include "gtest/gtest.h"
#include "kernels/cpu/int8_dot_linear.h"
#include "kernels/cpu/narrow_weight_linear.h"

namespace slotserve::kernels::cpu {
namespace {

bool CappedAtAvx2() {
  const char* cap = std::getenv("SLOTSERVE_CPU_ISA");
  return cap != nullptr && std::strcmp(cap, "avx2") == 0;
}

TEST(CpuFeaturesTest, FollowTheCpuUnlessCappedAtAvx2) {
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                      __builtin_cpu_supports("avx512bw");
  EXPECT_EQ(CpuHasAvx512(), avx512 && !CappedAtAvx2());
  EXPECT_EQ(CpuHasAvx512Vnni(), CpuHasAvx512() && __builtin_cpu_supports("avx512vnni"));
  EXPECT_EQ(BestNarrowGemvIsa(), CpuHasAvx512() ? NarrowGemvIsa::kAvx512 : NarrowGemvIsa::kAvx2);
  EXPECT_EQ(BestInt8DotIsa(), CpuHasAvx512Vnni() ? Int8DotIsa::kAvx512Vnni : Int8DotIsa::kAvx2);
  if (CappedAtAvx2()) {
    EXPECT_FALSE(CpuHasAvx512());
    EXPECT_FALSE(CpuHasAvx512Vnni());
  }
}

}  // namespace
}  // namespace slotserve::kernels::cpu
