// A second copy of an I8 weight matrix, laid out for the cpu's packed int8 x int8 GEMM
// (cpu/int8_packed_gemm.h), which a linear with int8 activations reads instead of the row-major
// weights when LinearParams::int8_packed_weight points at one.
//
// Layout: the output rows in groups of kInt8PackedGroup (16), the last group padded with zero
// rows; the inputs in quads of four, padded with zeros to whole activation blocks of 32
// (int8_activation_blocks.h). Per group, per quad, 64 bytes: lane l's four bytes are output row
// group * 16 + l's four weights of that quad, each stored as q_w + 128 (an unsigned byte). One
// 512-bit vpdpbusd then multiplies a quad of one input row (four signed bytes broadcast to all
// lanes) by 16 output rows at once, and eight of them finish a block of 32 for 16 outputs, so
// the block's scale is applied once per 512 products. The + 128 (vpdpbusd wants its vector
// operand unsigned) adds 128 x the block's sum of q_x to every lane, which the GEMM takes off
// once per block.
//
// Only cpus with AVX-512 VNNI run that GEMM; the loader makes this copy only there, and only
// when int8 activations are on (models/int8_activations.h), in place of the row-major one
// (models/device_weights.h): the embedding lookup reads a tied table's rows from it too.
#pragma once

#include <cstdint>

#include "kernels/backend.h"

namespace slotserve::kernels {

inline constexpr int kInt8PackedGroup = 16;

// Whether `backend` on this machine runs the packed GEMM (cpu with AVX-512 VNNI).
bool Int8PackedGemmAvailable(Backend backend);

// The packed copy's size for an I8 matrix [rows, cols].
int64_t Int8PackedWeightBytes(int rows, int cols);

// Writes the packed copy of `weight` (I8 [rows, cols], row-major) to `packed`
// (Int8PackedWeightBytes(rows, cols) bytes, host memory).
void PackInt8Weights(const int8_t* weight, int rows, int cols, uint8_t* packed);

// Row `row` of the I8 matrix [rows, cols] held by `packed`, each weight times `scale`, into
// out[cols]: the inverse of PackInt8Weights for one row. The embedding lookup reads a token
// table tied to the head this way, which then keeps no other copy.
void UnpackInt8Row(const uint8_t* packed, int cols, int row, float scale, float* out);

}  // namespace slotserve::kernels
