// Prompt and decode-input token ids for benchmarks: deterministic, pseudo-random, never a
// special token. Speed does not depend on which ids are fed, only on how many.
#pragma once

#include <cstdint>
#include <vector>

namespace slotserve::bench {

// `count` ids in [3, vocab) (ids below 3 are pad/bos/eos), the same for the same seed.
std::vector<int32_t> SyntheticTokens(int count, int vocab, uint32_t seed);

}  // namespace slotserve::bench
