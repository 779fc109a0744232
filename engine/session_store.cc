#include "engine/session_store.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "base/digest.h"

namespace slotserve::engine {

std::string NewSessionHandle() {
  // std::random_device reads the kernel's CSPRNG on Linux: handles cannot be guessed.
  std::random_device device;
  uint8_t bits[16];
  for (size_t i = 0; i < sizeof(bits); i += 4) {
    const uint32_t word = device();
    for (size_t b = 0; b < 4; ++b) bits[i + b] = static_cast<uint8_t>(word >> (8 * b));
  }
  return absl::StrCat("ss-", base::HexOf(bits));
}

}  // namespace slotserve::engine
