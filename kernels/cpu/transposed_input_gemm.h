// y = x W^T for a batch of many rows against a tile of F32 weight rows, with the batch's inputs
// transposed once per linear layer instead of the weights packed once per call: on AVX-512
// (transposed_input_gemm.cc) and on AVX2 (transposed_input_gemm_avx2.cc).
//
// The widened-tile path of narrow_weight_linear.h handed each F32 tile to OpenBLAS's sgemm,
// which packs it again into its panel format on every call. At batch 64 (ABC, F16, one thread)
// that packing (`sgemm_incopy`) was 18% of the step and the widening into the tile 8%, beside
// 45% in the product itself. Here the product reads the tile's rows as they are: each weight is
// broadcast (an embedded-broadcast FMA operand) against 16 rows of the transposed inputs, so a
// tile of 4 × 16 rows × 6 outputs keeps 24 accumulators over the whole dot product and nothing
// is packed but the inputs (rows × in floats, once per call, shared by the threads).
//
// Every output is summed over k in order, one FMA per input, whatever the tile or the split of
// the outputs between threads, so the results do not depend on either. The product is written
// once (transposed_input_gemm_body.inc); on AVX2 its tiles are 3 × 8 rows × 4 outputs or 2 × 8
// rows × 6 outputs (12 accumulators in 16 registers). On a 2-core AMD EPYC without AVX-512,
// OpenBLAS's packing (`sgemm_incopy`, `_oncopy`, `_beta`) had been 15% of a batch-64 step.
#pragma once

#include <cstdint>

namespace slotserve::kernels::cpu {

// xt [in][rows_padded]: the inputs transposed, rows_padded a multiple of 16 with zero rows past
// `rows`. w [outputs][in]: F32 weight rows. y[r * y_stride + o] for r < rows, o < outputs: the
// dot product of input row r and weight row o, added to y when `accumulate`. Only call where
// CpuHasAvx512() (cpu_features.h).
void TransposedInputGemmAvx512(const float* xt, int64_t rows_padded, int rows, int in,
                               const float* w, int outputs, float* y, int64_t y_stride,
                               bool accumulate);

// xt [in][rows_padded] = x [rows][in] (row stride x_stride) transposed, zero past `rows`.
// Returns rows_padded (rows rounded up to 16). AVX-512 too; 16 * x_stride must fit an int.
int64_t TransposeInputs(const float* x, int64_t x_stride, int rows, int in, float* xt);

// The same two on AVX2 registers, for CPUs without AVX-512; the same layout of xt.
void TransposedInputGemmAvx2(const float* xt, int64_t rows_padded, int rows, int in, const float* w,
                             int outputs, float* y, int64_t y_stride, bool accumulate);
int64_t TransposeInputsAvx2(const float* x, int64_t x_stride, int rows, int in, float* xt);

// The floats TransposeInputs writes for `rows` rows of `in` inputs.
inline int64_t TransposedInputFloats(int rows, int in) {
  return (static_cast<int64_t>(rows) + 15) / 16 * 16 * in;
}

}  // namespace slotserve::kernels::cpu
