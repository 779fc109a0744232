#include "server/grpc/session_transfer.h"

#include <span>
#include <utility>

#include "absl/time/clock.h"
#include "base/status_macros.h"

namespace slotserve::server {

SessionTransfer::SessionTransfer(engine::SessionStore& sessions, engine::StateBlobIdentity identity,
                                 std::string state_key)
    : sessions_(sessions), identity_(std::move(identity)), state_key_(std::move(state_key)) {}

absl::StatusOr<std::vector<uint8_t>> SessionTransfer::Export(absl::string_view handle) const {
  SLOTSERVE_ASSIGN_OR_RETURN(engine::RequestState state, sessions_.Peek(handle, absl::Now()));
  return engine::ExportStateBlob(state, identity_, state_key_);
}

absl::StatusOr<std::string> SessionTransfer::Import(absl::string_view blob) const {
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(blob.data()), blob.size());
  SLOTSERVE_ASSIGN_OR_RETURN(engine::RequestState state,
                             engine::ImportStateBlob(bytes, identity_, state_key_));
  return sessions_.Create(std::move(state), absl::Now());
}

}  // namespace slotserve::server
