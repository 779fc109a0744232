#include "kernels/backend.h"

#include <cstdio>
#include <cstdlib>

#ifdef SLOTSERVE_WITH_CUDA
#include "kernels/cuda/cuda_bridge.h"
#endif

namespace slotserve::kernels {

const char* BackendName(Backend backend) {
  switch (backend) {
    case Backend::kReference:
      return "reference";
    case Backend::kCpu:
      return "cpu";
    case Backend::kCuda:
      return "cuda";
  }
  return "unknown";
}

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "F32";
    case DType::kF16:
      return "F16";
    case DType::kBF16:
      return "BF16";
    case DType::kI8:
      return "I8";
  }
  return "unknown";
}

std::size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return 4;
    case DType::kF16:
    case DType::kBF16:
      return 2;
    case DType::kI8:
      return 1;
  }
  return 0;
}

bool CudaCompiledIn() {
#ifdef SLOTSERVE_WITH_CUDA
  return true;
#else
  return false;
#endif
}

bool CudaDeviceAvailable() {
#ifdef SLOTSERVE_WITH_CUDA
  return cuda_bridge::DeviceAvailable();
#else
  return false;
#endif
}

CudaProbe ProbeCudaDevice() {
#ifdef SLOTSERVE_WITH_CUDA
  return cuda_bridge::Probe();
#else
  return {CudaDeviceState::kNoDevice, "this build has no CUDA backend"};
#endif
}

void FailNoCudaBackend(const char* op) {
  std::fprintf(stderr,
               "slotserve: op '%s' was asked to run on the cuda backend, but this build has no "
               "CUDA backend (configure with -DSLOTSERVE_WITH_CUDA=ON on a machine with nvcc, or "
               "choose the cpu or reference backend)\n",
               op);
  std::abort();
}

}  // namespace slotserve::kernels
