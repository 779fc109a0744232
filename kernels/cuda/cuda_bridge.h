// The few CUDA runtime calls host-side code needs (device memory, streams), behind plain C++
// so that files outside kernels/cuda never include CUDA headers. Only compiled and called
// when SLOTSERVE_WITH_CUDA is defined; implemented in kernels/cuda/cuda_bridge.cu.
#pragma once

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "kernels/backend.h"
#include "kernels/cuda_device_probe.h"

namespace slotserve::kernels::cuda_bridge {

// The device probe's result, made once per process (cuda_device_probe.h).
const CudaProbe& Probe();
bool DeviceAvailable();  // Probe().state == kUsable
absl::StatusOr<void*> Allocate(std::size_t bytes);
void Free(void* ptr);
void CopyHostToDevice(void* dst, const void* src, std::size_t bytes, Stream stream);
void CopyDeviceToHost(void* dst, const void* src, std::size_t bytes, Stream stream);
void CopyDeviceToDevice(void* dst, const void* src, std::size_t bytes, Stream stream);
void CopyDeviceToDevice2D(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                          std::size_t row_bytes, std::size_t rows, Stream stream);
void FillZero(void* dst, std::size_t bytes, Stream stream);
void Synchronize(Stream stream);

// A stream for the engine thread. CUDA graphs can only be captured on a stream created this
// way, never on the legacy default (null) stream. It is a blocking stream: outside a capture,
// work queued on the null stream (e.g. a plain CopyHostToDevice) stays ordered with it.
absl::StatusOr<Stream> CreateStream();
void DestroyStream(Stream stream);

// "NVIDIA H100 80GB HBM3 (sm_90, driver 12.4, 79 GiB)" for the startup log and GetModelInfo;
// "no CUDA device" when none is usable.
std::string DeviceDescription();

}  // namespace slotserve::kernels::cuda_bridge
