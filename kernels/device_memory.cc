// Host backends (reference, cpu) keep "device" memory in 64-byte aligned host memory so that
// vector loads never straddle a cache line; the cuda backend goes through cuda_bridge.
#include "kernels/device_memory.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#ifdef SLOTSERVE_WITH_CUDA
#include "kernels/cuda/cuda_bridge.h"
#endif

namespace slotserve::kernels {
namespace {

constexpr std::size_t kHostAlignment = 64;
// Buffers of at least a huge page start on one and are offered to transparent huge pages
// (a no-op where the kernel's THP setting is "never"). A batch's states are megabytes apart
// and the attention loops touch a few lines per 4 KiB page of each: with 4 KiB pages the
// softmax step at batch 32 ran ~10% slower (bench/results/attention_prefetch.md).
constexpr std::size_t kHugePage = std::size_t{2} << 20;

bool IsHost(Backend backend) { return backend != Backend::kCuda; }

}  // namespace

absl::StatusOr<DeviceBuffer> DeviceBuffer::Allocate(Backend backend, std::size_t bytes) {
  DeviceBuffer buffer;
  buffer.backend_ = backend;
  buffer.bytes_ = bytes;
  if (bytes == 0) return buffer;
  if (IsHost(backend)) {
    // aligned_alloc wants a multiple of the alignment.
    const std::size_t alignment = bytes >= kHugePage ? kHugePage : kHostAlignment;
    const std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    buffer.data_ = std::aligned_alloc(alignment, rounded);
    if (buffer.data_ == nullptr) {
      buffer.bytes_ = 0;
      return absl::ResourceExhaustedError(absl::StrCat("cannot allocate ", bytes,
                                                       " bytes of host memory for the ",
                                                       BackendName(backend), " backend"));
    }
    if (alignment == kHugePage) madvise(buffer.data_, rounded, MADV_HUGEPAGE);
    return buffer;
  }
#ifdef SLOTSERVE_WITH_CUDA
  absl::StatusOr<void*> device = cuda_bridge::Allocate(bytes);
  if (!device.ok()) {
    buffer.bytes_ = 0;
    return device.status();
  }
  buffer.data_ = *device;
  return buffer;
#else
  buffer.bytes_ = 0;
  return absl::FailedPreconditionError(
      absl::StrCat("cannot allocate ", bytes,
                   " bytes on the cuda backend: this build has no CUDA backend (expected "
                   "backend cpu or reference, or a build with -DSLOTSERVE_WITH_CUDA=ON)"));
#endif
}

DeviceBuffer::~DeviceBuffer() {
  if (data_ == nullptr) return;
  if (IsHost(backend_)) {
    std::free(data_);
    return;
  }
#ifdef SLOTSERVE_WITH_CUDA
  cuda_bridge::Free(data_);
#endif
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : backend_(other.backend_),
      data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    DeviceBuffer old(std::move(*this));  // frees the current allocation on scope exit
    backend_ = other.backend_;
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void CopyHostToDevice(Backend backend, void* device_dst, const void* host_src, std::size_t bytes,
                      Stream stream) {
  if (bytes == 0) return;
  if (IsHost(backend)) {
    std::memcpy(device_dst, host_src, bytes);
    return;
  }
#ifdef SLOTSERVE_WITH_CUDA
  cuda_bridge::CopyHostToDevice(device_dst, host_src, bytes, stream);
#else
  (void)stream;
  FailNoCudaBackend("copy_host_to_device");
#endif
}

void CopyDeviceToHost(Backend backend, void* host_dst, const void* device_src, std::size_t bytes,
                      Stream stream) {
  if (bytes == 0) return;
  if (IsHost(backend)) {
    std::memcpy(host_dst, device_src, bytes);
    return;
  }
#ifdef SLOTSERVE_WITH_CUDA
  cuda_bridge::CopyDeviceToHost(host_dst, device_src, bytes, stream);
#else
  (void)stream;
  FailNoCudaBackend("copy_device_to_host");
#endif
}

void CopyDeviceToDevice(Backend backend, void* dst, const void* src, std::size_t bytes,
                        Stream stream) {
  if (bytes == 0) return;
  if (IsHost(backend)) {
    // memmove: a slot copied onto itself (or an overlapping range) stays well defined.
    std::memmove(dst, src, bytes);
    return;
  }
#ifdef SLOTSERVE_WITH_CUDA
  cuda_bridge::CopyDeviceToDevice(dst, src, bytes, stream);
#else
  (void)stream;
  FailNoCudaBackend("copy_device_to_device");
#endif
}

void CopyDeviceToDevice2D(Backend backend, void* dst, std::size_t dst_pitch, const void* src,
                          std::size_t src_pitch, std::size_t row_bytes, std::size_t rows,
                          Stream stream) {
  if (row_bytes == 0 || rows == 0) return;
  if (IsHost(backend)) {
    for (std::size_t r = 0; r < rows; ++r) {
      std::memmove(static_cast<char*>(dst) + r * dst_pitch,
                   static_cast<const char*>(src) + r * src_pitch, row_bytes);
    }
    return;
  }
#ifdef SLOTSERVE_WITH_CUDA
  cuda_bridge::CopyDeviceToDevice2D(dst, dst_pitch, src, src_pitch, row_bytes, rows, stream);
#else
  (void)stream;
  FailNoCudaBackend("copy_device_to_device_2d");
#endif
}

void FillZero(Backend backend, void* device_dst, std::size_t bytes, Stream stream) {
  if (bytes == 0) return;
  if (IsHost(backend)) {
    std::memset(device_dst, 0, bytes);
    return;
  }
#ifdef SLOTSERVE_WITH_CUDA
  cuda_bridge::FillZero(device_dst, bytes, stream);
#else
  (void)stream;
  FailNoCudaBackend("fill_zero");
#endif
}

void Synchronize(Backend backend, Stream stream) {
  if (IsHost(backend)) return;
#ifdef SLOTSERVE_WITH_CUDA
  cuda_bridge::Synchronize(stream);
#else
  (void)stream;
  FailNoCudaBackend("synchronize");
#endif
}

}  // namespace slotserve::kernels
