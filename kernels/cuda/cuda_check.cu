#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "kernels/capture_failure_trap.h"
#include "kernels/cuda/cuda_check.cuh"

namespace slotserve::kernels::cuda {

void FailCuda(const char* call, const char* error, const char* file, int line) {
  if (CaptureFailureTrap::Record(
          absl::StrCat(call, " returned ", error, " at ", file, ":", line, " while capturing"))) {
    return;
  }
  std::fprintf(stderr, "slotserve: CUDA call failed at %s:%d: %s returned %s\n", file, line, call,
               error);
  std::abort();
}

}  // namespace slotserve::kernels::cuda
