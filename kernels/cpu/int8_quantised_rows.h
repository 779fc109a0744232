// The input rows of the cpu's int8 x int8 kernels (int8_dot_linear.h, int8_packed_gemm.h),
// quantised once per call per block of 32 (int8_activation_blocks.h) into the forms the kernels
// read, and the same rounding handed back as floats for the rounded-rows kernel
// (int8_activations_linear.h).
#pragma once

#include <cstdint>

#include "kernels/linear.h"

namespace slotserve::kernels::cpu {

// The quantised input rows: values q_x and the blocks' scales, and whichever of the derived
// forms a kernel asked for (null otherwise). Rows are padded with zeros to whole blocks.
struct QuantisedRows {
  int8_t* values = nullptr;
  // |q_x|: vpdpbusd's and vpmaddubsw's unsigned operand, computed once per row instead of once
  // per weight row (int8_dot_rows.inc).
  int8_t* magnitudes = nullptr;
  // q_x + 128: the 512-bit row kernels' unsigned operand (int8_dot_wide.inc).
  uint8_t* biased = nullptr;
  // -128 x the block's sum of q_x, per row and block: what weights stored as q_w + 128 add to
  // the block's dot product (int8_packed_gemm.h), taken off up front.
  int32_t* bias_corrections = nullptr;
  float* scales = nullptr;  // per row and block
  int64_t row_bytes = 0;    // blocks * kInt8ActivationBlock
  int blocks = 0;
};

// The derived forms a kernel reads besides the values and scales.
enum class RowForm { kMagnitudes, kBiased, kBiasCorrections };

// Buffers for `rows` rows of `in_features` inputs with `form`, owned by the calling thread and
// reused by its next call (its workers only read them).
QuantisedRows QuantisedRowBuffers(int rows, int in_features, RowForm form);

// Quantises rows [begin, end) of p.x into `out`'s buffers.
void QuantiseRows(const LinearParams& p, const QuantisedRows& out, int begin, int end);

// Rows [begin, end) of p.x rounded exactly as QuantiseRows rounds them, written to `out` (rows
// of p.in_features floats) as the values q_x * d they stand for.
void RoundActivationRows(const LinearParams& p, float* out, int begin, int end);

}  // namespace slotserve::kernels::cpu
