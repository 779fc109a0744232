// A reusable float buffer whose first element starts a 64-byte cache line. std::vector only
// promises 16 bytes; a kernel that loads 32 or 64 bytes at a time from an unaligned buffer
// splits every second or every load across two lines (the int8 rounded rows' GEMV ran ~30%
// slower from a 16-byte-aligned buffer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace slotserve::kernels::cpu {

inline constexpr std::size_t kLineFloats = 64 / sizeof(float);

// Grows `buffer` (never shrinks it) to hold `count` floats from a line boundary and returns that
// boundary.
inline float* LineAlignedFloats(std::vector<float>& buffer, std::size_t count) {
  if (buffer.size() < count + kLineFloats) buffer.resize(count + kLineFloats);
  float* data = buffer.data();
  const std::size_t misalignment =
      reinterpret_cast<std::uintptr_t>(data) / sizeof(float) % kLineFloats;
  return data + (kLineFloats - misalignment) % kLineFloats;
}

}  // namespace slotserve::kernels::cpu
