#include "kernels/cpu/cpu_features.h"

#include <cstdlib>
#include <cstring>

namespace slotserve::kernels::cpu {
namespace {

bool CappedAtAvx2() {
  static const bool capped = [] {
    const char* cap = std::getenv("SLOTSERVE_CPU_ISA");
    return cap != nullptr && std::strcmp(cap, "avx2") == 0;
  }();
  return capped;
}

}  // namespace

bool CpuHasAvx512() {
  static const bool has = !CappedAtAvx2() && __builtin_cpu_supports("avx512f") &&
                          __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
  return has;
}

bool CpuHasAvx512Vnni() {
  static const bool has = CpuHasAvx512() && __builtin_cpu_supports("avx512vnni");
  return has;
}

}  // namespace slotserve::kernels::cpu
