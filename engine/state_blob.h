// A request's state as portable bytes (docs/ARCHITECTURE.md "Request state" export / import): what
// lets any replica resume a session, and what a client may hold between requests. Import trusts
// nothing it has not checked: every length is checked against what is left before it is used, the
// checksum covers every byte, and a blob is refused unless it was made by this model (the
// fingerprint of config.json + the tensor header), for this attention kind, with this state
// size — and, when the server has a --state-key, unless its HMAC verifies.
//
// Layout (little-endian):
//   offset  size  field
//   0       8     magic "SLOTSTAT"
//   8       4     format version (1)
//   12      4     flags: bit 0 = signed (an HMAC follows the checksum); other bits 0
//   16      32    model fingerprint (SHA-256)
//   48      4     attention kind length K (1..32), then K bytes of the kind's name
//   ..      4     state dtype (0 = f32, docs/MODEL_FORMAT.md "The attention kinds"; 1 = a softmax
//   model's KV cache in f16,
//                 the server's --kv-cache-dtype f16)
//   ..      8     token count: tokens the state has absorbed
//   ..      4     pending token: the last generated token, not yet fed (-1: none)
//   ..      8     payload length P, then P bytes (StateArena::Save: position, then the state)
//   ..      32    checksum: SHA-256 of every byte above
//   ..      32    HMAC-SHA256(state key, every byte above, checksum included), when signed
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/digest.h"

namespace slotserve::engine {

// What a blob must match to be imported by this server.
struct StateBlobIdentity {
  base::Digest model_fingerprint{};
  std::string attention_kind;  // "abc", "rfa", "luna", "softmax"
  int64_t payload_bytes = 0;   // StateArena::Save's size for one slot
  int64_t max_tokens = 0;      // the model's longest sequence
  uint32_t state_dtype = 0;    // kStateDtypeF32 or kStateDtypeF16KvCache
  int32_t vocab_size = 0;      // a pending token must be below it
};

inline constexpr uint32_t kStateDtypeF32 = 0;
inline constexpr uint32_t kStateDtypeF16KvCache = 1;

// A request's whole context, host side.
struct RequestState {
  int64_t token_count = 0;
  int32_t pending_token = -1;
  std::vector<uint8_t> payload;
};

inline constexpr uint32_t kStateBlobFormatVersion = 1;

// `state_key` empty: unsigned blob.
std::vector<uint8_t> ExportStateBlob(const RequestState& state, const StateBlobIdentity& identity,
                                     std::string_view state_key);

// INVALID_ARGUMENT saying what is wrong ("state blob: ... expected ..., got ...") for any blob
// that is not exactly what ExportStateBlob wrote for this identity and key.
absl::StatusOr<RequestState> ImportStateBlob(std::span<const uint8_t> blob,
                                             const StateBlobIdentity& identity,
                                             std::string_view state_key);

}  // namespace slotserve::engine
