// Export / import of sessions (docs/ARCHITECTURE.md "Request state"): a kept session's state as
// portable bytes (engine/state_blob.h: model fingerprint, attention kind, sizes, checksum, and an
// HMAC when the server has a state key), and bytes back into a new session. What the ExportSession
// and ImportSession RPCs do, on any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/session_store.h"
#include "engine/state_blob.h"

namespace slotserve::server {

class SessionTransfer {
 public:
  // `sessions` must outlive this. `state_key` empty: blobs are written unsigned and signed
  // ones are refused (state_blob.h).
  SessionTransfer(engine::SessionStore& sessions, engine::StateBlobIdentity identity,
                  std::string state_key);

  // The session's state as a blob, without taking it from the store: NOT_FOUND for an
  // unknown or expired handle.
  absl::StatusOr<std::vector<uint8_t>> Export(absl::string_view handle) const;
  // A new session from a blob: its handle. INVALID_ARGUMENT with the parser's message for a
  // blob that is malformed, truncated, of another model, kind or size, or not signed with
  // this server's key; RESOURCE_EXHAUSTED when it cannot fit --session-memory.
  absl::StatusOr<std::string> Import(absl::string_view blob) const;

 private:
  engine::SessionStore& sessions_;
  const engine::StateBlobIdentity identity_;
  const std::string state_key_;
};

}  // namespace slotserve::server
