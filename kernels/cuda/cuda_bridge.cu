// cuda_bridge.h on the CUDA runtime. Copies and fills are queued on the given stream (null is
// the legacy default stream); a device-to-host copy also waits for the stream, so the host
// may read its destination as soon as the call returns, as with the host backends' memcpy.
#include "kernels/cuda/cuda_bridge.h"

#include <cuda_runtime.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda_device_probe.h"

namespace slotserve::kernels::cuda_bridge {
namespace {

using cuda::AsCudaStream;

static_assert(kCudaSuccess == cudaSuccess);
static_assert(kCudaErrorInsufficientDriver == cudaErrorInsufficientDriver);
static_assert(kCudaErrorNoDevice == cudaErrorNoDevice);

CudaProbe ProbeDevice() {
  int count = 0;
  // With no driver or no device this returns an error instead of aborting; which error says
  // whether there is no GPU or a GPU this runtime cannot use (cuda_device_probe.h).
  const cudaError_t error = cudaGetDeviceCount(&count);
  int driver = 0;
  (void)cudaDriverGetVersion(&driver);  // 0 when no driver is installed
  (void)cudaGetLastError();  // clear it so that it is not reported by a later launch check
  return ClassifyCudaProbe(error, cudaGetErrorName(error), cudaGetErrorString(error), count,
                           driver);
}

}  // namespace

const CudaProbe& Probe() {
  static const CudaProbe probe = ProbeDevice();
  return probe;
}

bool DeviceAvailable() { return Probe().state == CudaDeviceState::kUsable; }

absl::StatusOr<void*> Allocate(std::size_t bytes) {
  if (!DeviceAvailable()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot allocate ", bytes,
        " bytes on the cuda backend: ", CudaDeviceStateName(Probe().state), " (", Probe().detail,
        "; expected a GPU and a driver; choose --backend cpu on this machine)"));
  }
  void* ptr = nullptr;
  const cudaError_t error = cudaMalloc(&ptr, bytes);
  if (error != cudaSuccess) {
    (void)cudaGetLastError();
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    (void)cudaMemGetInfo(&free_bytes, &total_bytes);
    return absl::ResourceExhaustedError(
        absl::StrCat("cudaMalloc of ", bytes, " bytes failed (", cudaGetErrorString(error),
                     "); the device has ", free_bytes, " of ", total_bytes, " bytes free"));
  }
  return ptr;
}

void Free(void* ptr) {
  if (ptr != nullptr) SLOTSERVE_CUDA_CHECK(cudaFree(ptr));
}

void CopyHostToDevice(void* dst, const void* src, std::size_t bytes, Stream stream) {
  if (bytes == 0) return;
  SLOTSERVE_CUDA_CHECK(
      cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, AsCudaStream(stream)));
}

void CopyDeviceToHost(void* dst, const void* src, std::size_t bytes, Stream stream) {
  if (bytes == 0) return;
  SLOTSERVE_CUDA_CHECK(
      cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, AsCudaStream(stream)));
  SLOTSERVE_CUDA_CHECK(cudaStreamSynchronize(AsCudaStream(stream)));
}

void CopyDeviceToDevice(void* dst, const void* src, std::size_t bytes, Stream stream) {
  if (bytes == 0 || dst == src) return;
  SLOTSERVE_CUDA_CHECK(
      cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, AsCudaStream(stream)));
}

void CopyDeviceToDevice2D(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                          std::size_t row_bytes, std::size_t rows, Stream stream) {
  if (row_bytes == 0 || rows == 0) return;
  SLOTSERVE_CUDA_CHECK(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, row_bytes, rows,
                                         cudaMemcpyDeviceToDevice, AsCudaStream(stream)));
}

void FillZero(void* dst, std::size_t bytes, Stream stream) {
  if (bytes == 0) return;
  SLOTSERVE_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, AsCudaStream(stream)));
}

void Synchronize(Stream stream) {
  SLOTSERVE_CUDA_CHECK(cudaStreamSynchronize(AsCudaStream(stream)));
}

absl::StatusOr<Stream> CreateStream() {
  if (!DeviceAvailable()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create a CUDA stream: ", CudaDeviceStateName(Probe().state), " (",
                     Probe().detail, "; expected a GPU and a driver)"));
  }
  cudaStream_t stream = nullptr;
  const cudaError_t error = cudaStreamCreateWithFlags(&stream, cudaStreamDefault);
  if (error != cudaSuccess) {
    (void)cudaGetLastError();
    return absl::InternalError(
        absl::StrCat("cudaStreamCreateWithFlags failed: ", cudaGetErrorString(error)));
  }
  return static_cast<Stream>(stream);
}

void DestroyStream(Stream stream) {
  if (stream != nullptr) SLOTSERVE_CUDA_CHECK(cudaStreamDestroy(AsCudaStream(stream)));
}

std::string DeviceDescription() {
  if (!DeviceAvailable()) return CudaDeviceStateName(Probe().state);
  int device = 0;
  cudaDeviceProp properties{};
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaGetDeviceProperties(&properties, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return "CUDA device (properties unavailable)";
  }
  int driver = 0;
  (void)cudaDriverGetVersion(&driver);
  return absl::StrCat(properties.name, " (sm_", properties.major, properties.minor, ", driver ",
                      driver / 1000, ".", (driver % 1000) / 10, ", ",
                      properties.totalGlobalMem >> 30, " GiB)");
}

}  // namespace slotserve::kernels::cuda_bridge
