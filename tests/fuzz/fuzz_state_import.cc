// libFuzzer target: state blobs (docs/ARCHITECTURE.md "Request state" import) -> ImportStateBlob.
// The first input byte says whether the server has a --state-key (odd: "fuzz key"); the rest is the
// blob. Any input must be imported or refused with a message; an imported blob must re-export to
// the same bytes (nothing accepted that this server would not have written itself).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "engine/state_blob.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  // The identity make_seed_corpus.py writes its seeds for.
  slotserve::engine::StateBlobIdentity identity;
  for (size_t i = 0; i < identity.model_fingerprint.size(); ++i) {
    identity.model_fingerprint[i] = static_cast<uint8_t>(i * 7 + 1);
  }
  identity.attention_kind = "abc";
  identity.payload_bytes = 64;
  identity.max_tokens = 1 << 20;
  identity.vocab_size = 4000;
  const std::string_view key = (data[0] & 1) != 0 ? "fuzz key" : "";
  const std::span<const uint8_t> blob(data + 1, size - 1);
  auto imported = slotserve::engine::ImportStateBlob(blob, identity, key);
  if (!imported.ok()) {
    if (imported.status().message().empty()) __builtin_trap();
    return 0;
  }
  const std::vector<uint8_t> again = slotserve::engine::ExportStateBlob(*imported, identity, key);
  if (again.size() != blob.size() || !std::equal(again.begin(), again.end(), blob.begin())) {
    __builtin_trap();
  }
  return 0;
}
