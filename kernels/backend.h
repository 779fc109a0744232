// Backends, dtypes and the dispatcher every op header uses.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <type_traits>

#include "kernels/cuda_device_probe.h"

namespace slotserve::kernels {

enum class Backend { kReference, kCpu, kCuda };
// kI8: signed int8 with one F32 scale per row (per output channel of a linear layer, per
// vocabulary row of an embedding), value = q * scale; only the ops that take a scale read it.
enum class DType { kF32, kF16, kBF16, kI8 };

// cudaStream_t on the CUDA backend; ignored by the host backends. Kept opaque so that
// host-only code never includes CUDA headers.
using Stream = void*;

const char* BackendName(Backend backend);
const char* DTypeName(DType dtype);
std::size_t DTypeSize(DType dtype);

// True when this build contains the CUDA backend (SLOTSERVE_WITH_CUDA).
bool CudaCompiledIn();
// True when CUDA is compiled in and a device can actually be used.
bool CudaDeviceAvailable();
// Whether there is no GPU, a usable one, or one present but unusable (with the CUDA error):
// cuda_device_probe.h. Without CUDA compiled in: no device.
CudaProbe ProbeCudaDevice();

template <Backend B>
using BackendTag = std::integral_constant<Backend, B>;

[[noreturn]] void FailNoCudaBackend(const char* op);

// Calls fn(BackendTag<B>{}) for the runtime backend. The CUDA instantiation is only
// referenced when CUDA is compiled in, so host-only builds link without it.
template <typename Fn>
void Dispatch(Backend backend, [[maybe_unused]] const char* op, Fn&& fn) {
  switch (backend) {
    case Backend::kReference:
      fn(BackendTag<Backend::kReference>{});
      return;
    case Backend::kCpu:
      fn(BackendTag<Backend::kCpu>{});
      return;
    case Backend::kCuda:
#ifdef SLOTSERVE_WITH_CUDA
      fn(BackendTag<Backend::kCuda>{});
      return;
#else
      FailNoCudaBackend(op);
#endif
  }
}

}  // namespace slotserve::kernels
