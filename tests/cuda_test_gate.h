// Whether a CUDA test instance runs, skips or fails here. It skips only when there is no GPU;
// a GPU that is present but unusable (a driver too old for this runtime) fails it, and so does
// no GPU at all when SLOTSERVE_REQUIRE_GPU=1 (scripts/gpu-check.sh sets it on a machine where
// it sees a GPU, so a probe that misses one cannot pass green by skipping everything).
#pragma once

#include <cstdlib>
#include <cstring>
#include <string>

#include "kernels/backend.h"

namespace slotserve::testing {

struct CudaTestGate {
  enum class Verdict { kRun, kSkip, kFail };
  Verdict verdict = Verdict::kRun;
  std::string why;
};

inline CudaTestGate GateCudaTest() {
  if (kernels::CudaDeviceAvailable()) return {};
  const kernels::CudaProbe probe = kernels::ProbeCudaDevice();
  if (probe.state == kernels::CudaDeviceState::kUnusable) {
    return {CudaTestGate::Verdict::kFail, "a CUDA device is present but unusable: " + probe.detail};
  }
  const char* required = std::getenv("SLOTSERVE_REQUIRE_GPU");
  if (required != nullptr && std::strcmp(required, "1") == 0) {
    return {CudaTestGate::Verdict::kFail,
            "SLOTSERVE_REQUIRE_GPU=1 but the CUDA backend sees no GPU: " + probe.detail};
  }
  return {CudaTestGate::Verdict::kSkip,
          "CUDA backend compiled in, but no GPU on this machine (" + probe.detail + ")"};
}

}  // namespace slotserve::testing

// First statement of a CUDA test body (or SetUp): runs on, skips, or fails as GateCudaTest says.
#define SLOTSERVE_GATE_CUDA_TEST()                                                      \
  do {                                                                                  \
    const ::slotserve::testing::CudaTestGate slotserve_gate =                           \
        ::slotserve::testing::GateCudaTest();                                           \
    if (slotserve_gate.verdict == ::slotserve::testing::CudaTestGate::Verdict::kFail) { \
      GTEST_FAIL() << slotserve_gate.why;                                               \
    }                                                                                   \
    if (slotserve_gate.verdict == ::slotserve::testing::CudaTestGate::Verdict::kSkip) { \
      GTEST_SKIP() << slotserve_gate.why;                                               \
    }                                                                                   \
  } while (0)
