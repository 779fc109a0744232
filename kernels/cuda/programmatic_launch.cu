// Whether launches may overlap the kernel before them (programmatic_launch.cuh).
#include <cstdlib>
#include <cstring>

#include "kernels/cuda/programmatic_launch.cuh"

namespace slotserve::kernels::cuda {

bool ProgrammaticLaunchEnabled() {
  static const bool enabled = [] {
    const char* setting = std::getenv("SLOTSERVE_CUDA_PDL");
    if (setting != nullptr && std::strcmp(setting, "0") == 0) return false;
    int device = 0, major = 0;
    SLOTSERVE_CUDA_CHECK(cudaGetDevice(&device));
    SLOTSERVE_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    return major >= 9;
  }();
  return enabled;
}

}  // namespace slotserve::kernels::cuda
