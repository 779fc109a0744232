// A counter-based random stream usable on host and device: draw i of stream `seed` is a pure
// function of (seed, i), so a request's draws do not depend on the batch it was served in or
// on which backend sampled it. Bits: splitmix64.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define SLOTSERVE_HOST_DEVICE __host__ __device__
#else
#define SLOTSERVE_HOST_DEVICE
#endif

namespace slotserve::kernels {

// The splitmix64 finaliser: a bijection on 64-bit words with full avalanche.
SLOTSERVE_HOST_DEVICE inline uint64_t MixBits(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in [0, 1) with 53 random bits: draw `index` of the stream `seed`.
SLOTSERVE_HOST_DEVICE inline double UniformDraw(uint64_t seed, uint64_t index) {
  const uint64_t bits = MixBits(MixBits(seed) ^ MixBits(index ^ 0xD1B54A32D192ED03ull));
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

}  // namespace slotserve::kernels
