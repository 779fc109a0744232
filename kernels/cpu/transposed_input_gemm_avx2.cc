// transposed_input_gemm.h on AVX2 registers (8 floats, 16 registers), for CPUs without
// AVX-512: the product of transposed_input_gemm_body.inc, as on AVX-512, with tiles cut to fit
// 16 ymm registers (RowBlock below) and the inputs transposed by 8 × 8 register transposes.
#include <immintrin.h>

#include <algorithm>
#include <vector>

#include "kernels/cpu/line_aligned_buffer.h"
#include "kernels/cpu/transposed_input_gemm.h"

namespace slotserve::kernels::cpu {
namespace {

#include "kernels/cpu/vec_avx2.inc"

constexpr int kMaxVecs = 3;  // 8-row vectors of one tile: 3 × 4 accumulators + 3 inputs + 1 weight
// Rows per block: every group of weight rows runs over all of the block's tiles before the next
// group is read. (Measured against a block of one 16-row tile, which read the weights from L2
// for every 16 rows: no difference within the noise; docs/CPU_SPEED_LOG.md.)
constexpr int kBlockRows = 64;
constexpr int kDepth = 64;  // inputs per pass: 64 rows × 64 inputs of xt (16 KiB) stay in L1

// rows[i] = lane i of the eight vectors in `rows` (an 8 × 8 transpose in registers).
void TransposeLanes(__m256 rows[8]) {
  __m256 t[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(rows[i], rows[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(rows[i], rows[i + 1]);
  }
  // Per 128-bit lane L, u[i + c] = column 4L + c of rows i..i+3.
  __m256 u[8];
  for (int i = 0; i < 8; i += 4) {
    for (int h = 0; h < 2; ++h) {
      u[i + 2 * h] = _mm256_shuffle_ps(t[i + h], t[i + 2 + h], 0x44);
      u[i + 2 * h + 1] = _mm256_shuffle_ps(t[i + h], t[i + 2 + h], 0xEE);
    }
  }
  for (int c = 0; c < 4; ++c) {
    rows[c] = _mm256_permute2f128_ps(u[c], u[c + 4], 0x20);
    rows[c + 4] = _mm256_permute2f128_ps(u[c], u[c + 4], 0x31);
  }
}

#include "kernels/cpu/transposed_input_gemm_body.inc"

// Rows [first, last) over inputs [k_begin, k_end), cut into tiles of three 8-row vectors × 4
// weight rows (7 loads per 12 FMAs) where three are left, and of two × 6 (8 per 12) otherwise:
// four vectors left go as two and two, since a tile of one vector × 4 weight rows needs 5 loads
// per 4 FMAs. Measured at 1 thread on a 2-core AMD EPYC (ABC F16, one sitting): 3 × 4 tiles
// alone were ×1.18 faster at 24 rows than 2 × 6 tiles alone, but ×0.94 at 32 and ×0.97 at 64.
void RowBlock(const float* xt, int64_t rows_padded, int first, int last, int in, int k_begin,
              int k_end, const float* w, int outputs, float* ct) {
  for (int r = first; r < last;) {
    const int left = (last - r + 7) / 8;
    const int vecs = left == 4 ? 2 : std::min(kMaxVecs, left);
    if (vecs == 3) {
      TileRow<3, 4>(xt, rows_padded, r, in, k_begin, k_end, w, outputs, ct);
    } else if (vecs == 2) {
      TileRow<2, 6>(xt, rows_padded, r, in, k_begin, k_end, w, outputs, ct);
    } else {
      TileRow<1, 6>(xt, rows_padded, r, in, k_begin, k_end, w, outputs, ct);
    }
    r += 8 * vecs;
  }
}

}  // namespace

int64_t TransposeInputsAvx2(const float* x, int64_t x_stride, int rows, int in, float* xt) {
  const int64_t rows_padded = (static_cast<int64_t>(rows) + 15) / 16 * 16;
  // Eight whole rows at a time, eight inputs at a time through a register transpose; the rows
  // of a partial group, the inputs past the last eight and the padding rows one by one.
  int first = 0;
  for (; first + 8 <= rows; first += 8) {
    const float* group = x + static_cast<int64_t>(first) * x_stride;
    int k = 0;
    for (; k + 8 <= in; k += 8) {
      __m256 block[8];
      for (int r = 0; r < 8; ++r) block[r] = _mm256_loadu_ps(group + r * x_stride + k);
      TransposeLanes(block);
      for (int c = 0; c < 8; ++c) _mm256_storeu_ps(xt + (k + c) * rows_padded + first, block[c]);
    }
    for (; k < in; ++k) {
      for (int r = 0; r < 8; ++r) xt[k * rows_padded + first + r] = group[r * x_stride + k];
    }
  }
  for (int k = 0; k < in; ++k) {
    for (int r = first; r < rows_padded; ++r) {
      xt[k * rows_padded + r] = r < rows ? x[r * x_stride + k] : 0.0f;
    }
  }
  return rows_padded;
}

void TransposedInputGemmAvx2(const float* xt, int64_t rows_padded, int rows, int in, const float* w,
                             int outputs, float* y, int64_t y_stride, bool accumulate) {
  Gemm(xt, rows_padded, rows, in, w, outputs, y, y_stride, accumulate);
}

}  // namespace slotserve::kernels::cpu
