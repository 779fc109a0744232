#include "bench/synthetic_tokens.h"

#include <algorithm>

namespace slotserve::bench {

std::vector<int32_t> SyntheticTokens(int count, int vocab, uint32_t seed) {
  std::vector<int32_t> tokens(std::max(count, 0));
  uint32_t x = seed * 2654435761u + 12345u;  // xorshift32 from a scrambled seed
  const int32_t range = std::max(vocab - 3, 1);
  for (auto& token : tokens) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    token = 3 + static_cast<int32_t>(x % range);
  }
  return tokens;
}

}  // namespace slotserve::bench
