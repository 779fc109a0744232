// The backends every kernel test body runs on, compared against the scalar reference. CUDA is
// listed whenever it is compiled in, so its kernels are checked by the same bodies; those
// instances skip at run time when no GPU is present.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/backend.h"
#include "tests/cuda_test_gate.h"

namespace slotserve::kernels::testing {

struct BackendCase {
  Backend backend;
  DType dtype;      // weight/table dtype, for the ops that take one; F32 otherwise
  float tolerance;  // |got - want| <= tolerance * (1 + |want|) against the reference
};

// Fp32 tolerance of each optimised backend against the double-precision reference.
inline float DefaultTolerance(Backend backend) { return backend == Backend::kCuda ? 2e-4f : 2e-5f; }

// Optimised backends compared against the reference (cpu, and cuda when compiled in).
inline std::vector<Backend> OptimisedBackends() {
  std::vector<Backend> backends = {Backend::kCpu};
  if (CudaCompiledIn()) backends.push_back(Backend::kCuda);
  return backends;
}

// Every backend, for properties each must have on its own (chunking, batching, reset).
inline std::vector<Backend> AllBackends() {
  std::vector<Backend> backends = {Backend::kReference};
  for (Backend b : OptimisedBackends()) backends.push_back(b);
  return backends;
}

// One F32 case per optimised backend.
inline std::vector<BackendCase> F32Cases() {
  std::vector<BackendCase> cases;
  for (Backend b : OptimisedBackends()) cases.push_back({b, DType::kF32, DefaultTolerance(b)});
  return cases;
}

inline std::string CaseName(const BackendCase& c) {
  return std::string(BackendName(c.backend)) + "_" + DTypeName(c.dtype);
}

// gtest prints parameters with this (names instead of raw bytes).
inline void PrintTo(const BackendCase& c, std::ostream* os) {
  *os << CaseName(c) << " tolerance " << c.tolerance;
}

}  // namespace slotserve::kernels::testing

// First statement of every test body: CUDA instances skip when there is no GPU, and fail when
// a GPU is present but unusable (tests/cuda_test_gate.h).
#define SLOTSERVE_SKIP_IF_UNAVAILABLE(backend)               \
  do {                                                       \
    if ((backend) == ::slotserve::kernels::Backend::kCuda) { \
      SLOTSERVE_GATE_CUDA_TEST();                            \
    }                                                        \
  } while (0)
