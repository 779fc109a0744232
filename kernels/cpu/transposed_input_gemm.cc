#include "kernels/cpu/transposed_input_gemm.h"

#include <immintrin.h>

#include <algorithm>
#include <vector>

#include "kernels/cpu/line_aligned_buffer.h"

namespace slotserve::kernels::cpu {

#include "kernels/cpu/avx512_functions_begin.inc"

namespace {

#include "kernels/cpu/vec_avx512.inc"

constexpr int kMaxVecs = 4;  // 16-row vectors of one tile
constexpr int kMaxOuts = 6;  // weight rows of one tile: 4 × 6 accumulators + 4 inputs
constexpr int kBlockRows = kLanes * kMaxVecs;  // one tile's rows
// Inputs per pass over a row block's tiles: 64 rows × 128 inputs of xt (32 KiB) stay in L1
// while every weight tile of the block runs over them.
constexpr int kDepth = 128;

// rows[i] = lane i of the sixteen vectors in `rows` (a 16 × 16 transpose in registers).
void TransposeLanes(__m512 rows[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(rows[i], rows[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(rows[i], rows[i + 1]);
  }
  // Per 128-bit lane L, rows[i + c] = column 4L + c of rows i..i+3.
  for (int i = 0; i < 16; i += 4) {
    for (int h = 0; h < 2; ++h) {
      const __m512d a = _mm512_castps_pd(t[i + h]);
      const __m512d b = _mm512_castps_pd(t[i + 2 + h]);
      rows[i + 2 * h] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
      rows[i + 2 * h + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
    }
  }
  // Now 4 × 4 blocks of 128-bit lanes: swap them across the vectors.
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm512_shuffle_f32x4(rows[i], rows[i + 4], 0x88);
    t[i + 4] = _mm512_shuffle_f32x4(rows[i], rows[i + 4], 0xDD);
    t[i + 8] = _mm512_shuffle_f32x4(rows[i + 8], rows[i + 12], 0x88);
    t[i + 12] = _mm512_shuffle_f32x4(rows[i + 8], rows[i + 12], 0xDD);
  }
  for (int i = 0; i < 4; ++i) {
    rows[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
    rows[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xDD);
    rows[i + 4] = _mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0x88);
    rows[i + 12] = _mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0xDD);
  }
}

#include "kernels/cpu/transposed_input_gemm_body.inc"

// A block is one tile of up to four 16-row vectors, run over every group of 6 weight rows.
void RowBlock(const float* xt, int64_t rows_padded, int first, int last, int in, int k_begin,
              int k_end, const float* w, int outputs, float* ct) {
  switch (std::min(kMaxVecs, (last - first + kLanes - 1) / kLanes)) {
    case 4:
      return TileRow<4, kMaxOuts>(xt, rows_padded, first, in, k_begin, k_end, w, outputs, ct);
    case 3:
      return TileRow<3, kMaxOuts>(xt, rows_padded, first, in, k_begin, k_end, w, outputs, ct);
    case 2:
      return TileRow<2, kMaxOuts>(xt, rows_padded, first, in, k_begin, k_end, w, outputs, ct);
    default:
      return TileRow<1, kMaxOuts>(xt, rows_padded, first, in, k_begin, k_end, w, outputs, ct);
  }
}

}  // namespace

int64_t TransposeInputs(const float* x, int64_t x_stride, int rows, int in, float* xt) {
  const int64_t rows_padded = (static_cast<int64_t>(rows) + 15) / 16 * 16;
  // Sixteen rows at a time, one gather per input column: the rows' cache lines stay in L1 while
  // k walks along them, and each column of the group is one 64-byte store.
  const __m512i lane_rows =
      _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                         _mm512_set1_epi32(static_cast<int>(x_stride)));
  for (int first = 0; first < rows; first += 16) {
    const int count = std::min(16, rows - first);
    const __mmask16 valid = static_cast<__mmask16>((1u << count) - 1);
    const float* group = x + static_cast<int64_t>(first) * x_stride;
    float* out = xt + first;
    for (int k = 0; k < in; ++k, out += rows_padded) {
      _mm512_storeu_ps(
          out, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), valid, lane_rows, group + k, 4));
    }
  }
  return rows_padded;
}

void TransposedInputGemmAvx512(const float* xt, int64_t rows_padded, int rows, int in,
                               const float* w, int outputs, float* y, int64_t y_stride,
                               bool accumulate) {
  Gemm(xt, rows_padded, rows, in, w, outputs, y, y_stride, accumulate);
}

#include "kernels/cpu/avx512_functions_end.inc"

}  // namespace slotserve::kernels::cpu
