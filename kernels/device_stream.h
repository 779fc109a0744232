// The stream a backend's work is queued on. Host backends run synchronously and need none
// (get() is null); on cuda it is a stream of its own, which CUDA graph capture requires (the
// legacy default stream cannot be captured). It is ordered with the null stream, so copies
// queued there stay in order with it. Move-only; destroys its stream.
#pragma once

#include "absl/status/statusor.h"
#include "kernels/backend.h"

namespace slotserve::kernels {

class DeviceStream {
 public:
  DeviceStream() = default;
  static absl::StatusOr<DeviceStream> Create(Backend backend);
  ~DeviceStream();
  DeviceStream(DeviceStream&& other) noexcept;
  DeviceStream& operator=(DeviceStream&& other) noexcept;
  DeviceStream(const DeviceStream&) = delete;
  DeviceStream& operator=(const DeviceStream&) = delete;

  Stream get() const { return stream_; }
  Backend backend() const { return backend_; }

 private:
  Backend backend_ = Backend::kCpu;
  Stream stream_ = nullptr;
};

}  // namespace slotserve::kernels
