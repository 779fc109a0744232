// Memory on a backend's device: host memory for reference/cpu, device memory for cuda.
#pragma once

#include <cstddef>

#include "absl/status/statusor.h"
#include "kernels/backend.h"

namespace slotserve::kernels {

// Owns one allocation on a backend's device. Move-only.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  static absl::StatusOr<DeviceBuffer> Allocate(Backend backend, std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return data_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  std::size_t bytes() const { return bytes_; }
  Backend backend() const { return backend_; }

 private:
  Backend backend_ = Backend::kCpu;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// Copies between host memory and a backend's device memory (plain memcpy on host backends).
void CopyHostToDevice(Backend backend, void* device_dst, const void* host_src, std::size_t bytes,
                      Stream stream = nullptr);
void CopyDeviceToHost(Backend backend, void* host_dst, const void* device_src, std::size_t bytes,
                      Stream stream = nullptr);
void CopyDeviceToDevice(Backend backend, void* dst, const void* src, std::size_t bytes,
                        Stream stream = nullptr);
// `rows` rows of `row_bytes` each, from src (rows `src_pitch` bytes apart) to dst (rows
// `dst_pitch` bytes apart), both device memory, in one call (cudaMemcpy2DAsync on cuda): e.g.
// a strided block of projected rows into a request's state, without a copy per row.
void CopyDeviceToDevice2D(Backend backend, void* dst, std::size_t dst_pitch, const void* src,
                          std::size_t src_pitch, std::size_t row_bytes, std::size_t rows,
                          Stream stream = nullptr);
void FillZero(Backend backend, void* device_dst, std::size_t bytes, Stream stream = nullptr);
// Waits until all work queued on the stream is done (no-op on host backends).
void Synchronize(Backend backend, Stream stream = nullptr);

}  // namespace slotserve::kernels
