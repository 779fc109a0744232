#include <cstdio>
#include <cstdlib>

#include "kernels/cuda/cuda_check.cuh"

namespace slotserve::kernels::cuda {

void FailCuda(const char* call, const char* error, const char* file, int line) {
  std::fprintf(stderr, "slotserve: CUDA call failed at %s:%d: %s returned %s\n", file, line, call,
               error);
  std::abort();
}

}  // namespace slotserve::kernels::cuda
