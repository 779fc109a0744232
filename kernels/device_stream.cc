#include "kernels/device_stream.h"

#include <utility>

#include "absl/status/status.h"

#ifdef SLOTSERVE_WITH_CUDA
#include "base/status_macros.h"
#include "kernels/cuda/cuda_bridge.h"
#endif

namespace slotserve::kernels {

absl::StatusOr<DeviceStream> DeviceStream::Create(Backend backend) {
  DeviceStream stream;
  stream.backend_ = backend;
  if (backend != Backend::kCuda) return stream;
#ifdef SLOTSERVE_WITH_CUDA
  SLOTSERVE_ASSIGN_OR_RETURN(stream.stream_, cuda_bridge::CreateStream());
  return stream;
#else
  return absl::FailedPreconditionError(
      "cannot create a stream on the cuda backend: this build has no CUDA backend (expected "
      "backend cpu or reference, or a build with -DSLOTSERVE_WITH_CUDA=ON)");
#endif
}

DeviceStream::~DeviceStream() {
#ifdef SLOTSERVE_WITH_CUDA
  if (stream_ != nullptr) cuda_bridge::DestroyStream(stream_);
#endif
}

DeviceStream::DeviceStream(DeviceStream&& other) noexcept
    : backend_(other.backend_), stream_(std::exchange(other.stream_, nullptr)) {}

DeviceStream& DeviceStream::operator=(DeviceStream&& other) noexcept {
  if (this != &other) {
    DeviceStream old(std::move(*this));  // destroys the current stream on scope exit
    backend_ = other.backend_;
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

}  // namespace slotserve::kernels
