#include "kernels/cuda_device_probe.h"

#include "absl/strings/str_cat.h"

namespace slotserve::kernels {

CudaProbe ClassifyCudaProbe(int error, const std::string& error_name, const std::string& error_text,
                            int device_count, int driver_version) {
  if (error == kCudaSuccess) {
    if (device_count > 0) {
      return {CudaDeviceState::kUsable, absl::StrCat(device_count, " CUDA device(s)")};
    }
    return {CudaDeviceState::kNoDevice, "the CUDA runtime reports 0 devices"};
  }
  const std::string failure =
      absl::StrCat("cudaGetDeviceCount failed with ", error_name, " (", error, "): ", error_text);
  if (error == kCudaErrorNoDevice) return {CudaDeviceState::kNoDevice, failure};
  if (error == kCudaErrorInsufficientDriver && driver_version == 0) {
    return {CudaDeviceState::kNoDevice, absl::StrCat(failure, "; no CUDA driver is installed")};
  }
  if (error == kCudaErrorInsufficientDriver) {
    return {CudaDeviceState::kUnusable,
            absl::StrCat(failure, "; the installed driver supports CUDA ", driver_version / 1000,
                         ".", (driver_version % 1000) / 10,
                         ", older than this build's runtime: update the driver")};
  }
  return {CudaDeviceState::kUnusable, failure};
}

const char* CudaDeviceStateName(CudaDeviceState state) {
  switch (state) {
    case CudaDeviceState::kNoDevice:
      return "no CUDA device";
    case CudaDeviceState::kUsable:
      return "usable";
    case CudaDeviceState::kUnusable:
      return "present but unusable";
  }
  return "?";
}

}  // namespace slotserve::kernels
