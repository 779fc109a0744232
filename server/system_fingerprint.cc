#include "server/system_fingerprint.h"

#include "absl/strings/str_cat.h"

namespace slotserve::server {
namespace {

constexpr size_t kHexDigits = 12;

}  // namespace

std::string SystemFingerprint(const FingerprintedSetup& setup) {
  base::Sha256 hash;
  hash.Update(std::span<const uint8_t>(setup.model_fingerprint));
  // Each part ends with a NUL, so that no two different setups hash the same bytes.
  for (const std::string& part : {setup.version, setup.backend, setup.kv_cache_dtype,
                                  std::string(setup.int8_activations ? "int8-activations" : "")}) {
    hash.Update(std::string_view(part.c_str(), part.size() + 1));
  }
  const base::Digest digest = hash.Finish();
  return absl::StrCat("fp_", base::HexOf(digest).substr(0, kHexDigits));
}

}  // namespace slotserve::server
