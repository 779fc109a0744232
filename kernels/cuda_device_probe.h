// Whether the CUDA backend can run here, told apart in three: no GPU at all (no device, or no
// driver installed: the CPU serves and CUDA tests skip), a usable GPU, or a GPU that is present
// but unusable (a driver too old for this CUDA runtime, a device busy in exclusive mode, a
// broken install). Before, every cudaGetDeviceCount error read as "no GPU", so a machine with a
// GPU the runtime could not use served from the CPU without a word and every CUDA test skipped
// green. The classification is a pure function of the probe's results, so it is unit-tested
// with error codes on a machine without a GPU (tests/unit/kernels/cuda_device_probe_test.cc).
#pragma once

#include <string>
#include <string_view>

namespace slotserve::kernels {

enum class CudaDeviceState {
  kNoDevice,  // no CUDA device or no driver (or CUDA not compiled in): use the CPU, skip tests
  kUsable,
  kUnusable,  // a GPU or a driver is there but the runtime cannot use it: an error, not a skip
};

struct CudaProbe {
  CudaDeviceState state = CudaDeviceState::kNoDevice;
  // Why, for logs and error messages: the CUDA error's name and text when the probe failed.
  std::string detail;
};

// cudaError_t values the classification names (checked against cuda_runtime.h in
// cuda_bridge.cu with static_asserts, so this header needs no CUDA include).
inline constexpr int kCudaSuccess = 0;
inline constexpr int kCudaErrorInsufficientDriver = 35;
inline constexpr int kCudaErrorNoDevice = 100;

// From cudaGetDeviceCount's `error` (with its name and text), the `device_count` it gave and
// cudaDriverGetVersion's `driver_version` (0 when no driver is installed):
//   - success with at least one device: usable;
//   - success with none, cudaErrorNoDevice, or cudaErrorInsufficientDriver with no driver
//     installed (driver_version 0): no device;
//   - every other error (cudaErrorInsufficientDriver with a driver installed: too old for this
//     runtime; cudaErrorSystemDriverMismatch, cudaErrorDevicesUnavailable, ...): unusable.
CudaProbe ClassifyCudaProbe(int error, const std::string& error_name, const std::string& error_text,
                            int device_count, int driver_version);

// "no CUDA device", "usable" or "present but unusable", for messages.
const char* CudaDeviceStateName(CudaDeviceState state);

}  // namespace slotserve::kernels
