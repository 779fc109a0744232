// SHA-256 and HMAC-SHA256 (OpenSSL's libcrypto) for what must not be forged or silently
// corrupted: model fingerprints, state blob checksums and signatures, API key checks.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace slotserve::base {

using Digest = std::array<uint8_t, 32>;

// Incremental SHA-256: Update any number of times, then Finish once.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void Update(std::span<const uint8_t> bytes);
  void Update(std::string_view bytes);
  Digest Finish();

 private:
  void* context_;  // EVP_MD_CTX
};

Digest Sha256Of(std::span<const uint8_t> bytes);
Digest HmacSha256(std::string_view key, std::span<const uint8_t> bytes);

// Equality that takes the same time wherever the first difference is (for secrets).
bool DigestsEqual(const Digest& a, const Digest& b);

// Lower-case hex.
std::string HexOf(std::span<const uint8_t> bytes);

}  // namespace slotserve::base
