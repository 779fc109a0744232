#include "engine/state_blob.h"

#include <cstring>
#include <iterator>
#include <optional>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace slotserve::engine {
namespace {

constexpr char kMagic[8] = {'S', 'L', 'O', 'T', 'S', 'T', 'A', 'T'};
constexpr uint32_t kSignedFlag = 1;
constexpr size_t kMaxKindBytes = 32;

// "0 (f32)", "1 (f16 KV cache)", or the bare number of an unknown code.
std::string StateDtypeName(uint32_t code) {
  if (code == kStateDtypeF32) return "0 (f32)";
  if (code == kStateDtypeF16KvCache) return "1 (f16 KV cache)";
  return absl::StrCat(code);
}

template <typename T>
void Put(std::vector<uint8_t>& out, T value) {
  uint8_t bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));  // the server runs on little-endian machines only
  out.insert(out.end(), bytes, bytes + sizeof(T));
}

absl::Status Invalid(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("state blob: ", what));
}

// Reads fields front to back; every read is checked against what is left.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  template <typename T>
  std::optional<T> Read() {
    if (left() < sizeof(T)) return std::nullopt;
    T value;
    std::memcpy(&value, bytes_.data() + offset_, sizeof(T));
    offset_ += sizeof(T);
    return value;
  }
  std::optional<std::span<const uint8_t>> Take(size_t count) {
    if (left() < count) return std::nullopt;
    std::span<const uint8_t> taken = bytes_.subspan(offset_, count);
    offset_ += count;
    return taken;
  }
  size_t left() const { return bytes_.size() - offset_; }
  size_t offset() const { return offset_; }

 private:
  std::span<const uint8_t> bytes_;
  size_t offset_ = 0;
};

absl::Status CutShort(const Reader& reader, absl::string_view field) {
  return Invalid(absl::StrCat("cut short: ", reader.left(), " bytes left at offset ",
                              reader.offset(), ", too few for the ", field));
}

}  // namespace

std::vector<uint8_t> ExportStateBlob(const RequestState& state, const StateBlobIdentity& identity,
                                     std::string_view state_key) {
  std::vector<uint8_t> out(std::begin(kMagic), std::end(kMagic));
  out.reserve(160 + state.payload.size());
  Put<uint32_t>(out, kStateBlobFormatVersion);
  Put<uint32_t>(out, state_key.empty() ? 0 : kSignedFlag);
  out.insert(out.end(), identity.model_fingerprint.begin(), identity.model_fingerprint.end());
  Put<uint32_t>(out, static_cast<uint32_t>(identity.attention_kind.size()));
  out.insert(out.end(), identity.attention_kind.begin(), identity.attention_kind.end());
  Put<uint32_t>(out, identity.state_dtype);
  Put<int64_t>(out, state.token_count);
  Put<int32_t>(out, state.pending_token);
  Put<uint64_t>(out, state.payload.size());
  out.insert(out.end(), state.payload.begin(), state.payload.end());
  const base::Digest checksum = base::Sha256Of(out);
  out.insert(out.end(), checksum.begin(), checksum.end());
  if (!state_key.empty()) {
    const base::Digest mac = base::HmacSha256(state_key, out);
    out.insert(out.end(), mac.begin(), mac.end());
  }
  return out;
}

absl::StatusOr<RequestState> ImportStateBlob(std::span<const uint8_t> blob,
                                             const StateBlobIdentity& identity,
                                             std::string_view state_key) {
  Reader reader(blob);
  std::optional<std::span<const uint8_t>> magic = reader.Take(sizeof(kMagic));
  if (!magic || std::memcmp(magic->data(), kMagic, sizeof(kMagic)) != 0) {
    return Invalid(absl::StrCat("does not start with \"SLOTSTAT\" (", blob.size(),
                                " bytes; not a slotserve state export)"));
  }
  const std::optional<uint32_t> version = reader.Read<uint32_t>();
  if (!version) return CutShort(reader, "format version");
  if (*version != kStateBlobFormatVersion) {
    return Invalid(
        absl::StrCat("format version must be ", kStateBlobFormatVersion, ", got ", *version));
  }
  const std::optional<uint32_t> flags = reader.Read<uint32_t>();
  if (!flags) return CutShort(reader, "flags");
  if ((*flags & ~kSignedFlag) != 0) {
    return Invalid(absl::StrCat("unknown flags 0x", absl::Hex(*flags)));
  }
  const bool is_signed = (*flags & kSignedFlag) != 0;
  if (is_signed && state_key.empty()) {
    return Invalid("it is signed, but this server has no --state-key to verify it with");
  }
  if (!is_signed && !state_key.empty()) {
    return Invalid(
        "it is unsigned, but this server has a --state-key and accepts only blobs "
        "signed with it");
  }
  const std::optional<std::span<const uint8_t>> fingerprint = reader.Take(32);
  if (!fingerprint) return CutShort(reader, "model fingerprint");
  const std::optional<uint32_t> kind_bytes = reader.Read<uint32_t>();
  if (!kind_bytes) return CutShort(reader, "attention kind length");
  if (*kind_bytes == 0 || *kind_bytes > kMaxKindBytes) {
    return Invalid(absl::StrCat("attention kind length must be in [1, ", kMaxKindBytes, "], got ",
                                *kind_bytes));
  }
  const std::optional<std::span<const uint8_t>> kind = reader.Take(*kind_bytes);
  if (!kind) return CutShort(reader, "attention kind");
  const std::optional<uint32_t> dtype = reader.Read<uint32_t>();
  if (!dtype) return CutShort(reader, "state dtype");
  RequestState state;
  const std::optional<int64_t> token_count = reader.Read<int64_t>();
  if (!token_count) return CutShort(reader, "token count");
  const std::optional<int32_t> pending = reader.Read<int32_t>();
  if (!pending) return CutShort(reader, "pending token");
  const std::optional<uint64_t> payload_bytes = reader.Read<uint64_t>();
  if (!payload_bytes) return CutShort(reader, "payload length");
  const size_t trailer = is_signed ? 64 : 32;
  if (*payload_bytes > reader.left() || reader.left() - *payload_bytes != trailer) {
    return Invalid(absl::StrCat("payload length ", *payload_bytes, " does not fit: ", reader.left(),
                                " bytes follow it, expected the payload and a ", trailer,
                                "-byte trailer"));
  }
  const std::span<const uint8_t> payload = *reader.Take(*payload_bytes);
  const size_t checked_bytes = reader.offset();
  base::Digest stored_checksum;
  std::memcpy(stored_checksum.data(), reader.Take(32)->data(), 32);
  if (!base::DigestsEqual(stored_checksum, base::Sha256Of(blob.first(checked_bytes)))) {
    return Invalid("checksum mismatch: the blob was damaged or altered");
  }
  if (is_signed) {
    base::Digest stored_mac;
    std::memcpy(stored_mac.data(), reader.Take(32)->data(), 32);
    if (!base::DigestsEqual(stored_mac,
                            base::HmacSha256(state_key, blob.first(checked_bytes + 32)))) {
      return Invalid("signature does not verify with this server's --state-key");
    }
  }
  // The bytes are intact; now whether they belong to this model.
  if (std::memcmp(fingerprint->data(), identity.model_fingerprint.data(), 32) != 0) {
    return Invalid(absl::StrCat("made by another model (fingerprint ", base::HexOf(*fingerprint),
                                ", this model's is ", base::HexOf(identity.model_fingerprint),
                                ")"));
  }
  const absl::string_view kind_name(reinterpret_cast<const char*>(kind->data()), kind->size());
  if (kind_name != absl::string_view(identity.attention_kind)) {
    return Invalid(absl::StrCat("attention kind must be \"", identity.attention_kind, "\", got \"",
                                absl::CHexEscape(kind_name), "\""));
  }
  if (*dtype != identity.state_dtype) {
    return Invalid(absl::StrCat("state dtype must be ", StateDtypeName(identity.state_dtype),
                                " for this server, got ", StateDtypeName(*dtype)));
  }
  if (static_cast<int64_t>(*payload_bytes) != identity.payload_bytes) {
    return Invalid(absl::StrCat("payload must be ", identity.payload_bytes,
                                " bytes for this model, got ", *payload_bytes));
  }
  if (*token_count < 0 || *token_count > identity.max_tokens) {
    return Invalid(
        absl::StrCat("token count must be in [0, ", identity.max_tokens, "], got ", *token_count));
  }
  int32_t payload_position = -1;
  if (payload.size() >= sizeof(payload_position)) {
    std::memcpy(&payload_position, payload.data(), sizeof(payload_position));
  }
  if (payload_position != *token_count) {
    return Invalid(absl::StrCat("token count ", *token_count,
                                " disagrees with the position stored in the payload (",
                                payload_position, ")"));
  }
  // An unsigned blob's checksum anyone can recompute: a token the continuation would only
  // refuse later is refused here, where the client sent it.
  if (*pending < -1 || *pending >= identity.vocab_size) {
    return Invalid(absl::StrCat("pending token must be -1 (none) or a token id in [0, ",
                                identity.vocab_size, "), got ", *pending));
  }
  state.token_count = *token_count;
  state.pending_token = *pending;
  state.payload.assign(payload.begin(), payload.end());
  return state;
}

}  // namespace slotserve::engine
