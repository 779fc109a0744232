// The int8 activations of LinearParams::int8_activations: each input row is cut into blocks of
// kInt8ActivationBlock values (the last one shorter when in_features is not a multiple), and
// each block is stored as int8 q[i] = round_half_even(x[i] * (127 / amax)) with its F32 scale
// d = amax / 127 (amax = max |x| over the block; an all-zero block has d = 0 and q = 0). An int8
// weight row (q_w, s_w) then gives
//     y = s_w * sum over blocks b of d_b * (sum_{i in b} q_w[i] * q_x[i]),
// where the inner sum is exact integer arithmetic. This is llama.cpp's Q8_0 quantisation of
// the activations (blocks of 32, symmetric, one scale per block); the weights keep our format
// (one scale per output row).
//
// Written once here in scalar form: the reference backend computes with it, and the cpu
// backend's vectorised quantiser must produce the same bytes (same float operations in the
// same order: one division for the reciprocal, one multiplication, round to nearest even).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace slotserve::kernels {

inline constexpr int kInt8ActivationBlock = 32;

inline int Int8ActivationBlocks(int in_features) {
  return (in_features + kInt8ActivationBlock - 1) / kInt8ActivationBlock;
}

// Quantises one block of `count` (<= kInt8ActivationBlock) values; returns its scale d.
inline float QuantiseActivationBlock(const float* x, int count, int8_t* q) {
  float amax = 0.0f;
  for (int i = 0; i < count; ++i) amax = std::max(amax, std::fabs(x[i]));
  const float inverse = amax > 0.0f ? 127.0f / amax : 0.0f;
  for (int i = 0; i < count; ++i) {
    q[i] = static_cast<int8_t>(std::clamp(std::nearbyint(x[i] * inverse), -127.0f, 127.0f));
  }
  return amax / 127.0f;
}

}  // namespace slotserve::kernels
