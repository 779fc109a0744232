// The one place where engine errors (absl::Status) become gRPC statuses (docs/ARCHITECTURE.md
// "Floors").
#pragma once

#include <grpcpp/support/status.h>
#include "absl/status/status.h"

namespace slotserve::server {

// Same code (absl and gRPC share the canonical code numbers) and the same message, so the
// message that names the bad field reaches the client unchanged.
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace slotserve::server
