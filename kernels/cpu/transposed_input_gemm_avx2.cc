// transposed_input_gemm.h on AVX2 registers (8 floats, 16 registers), for CPUs without
// AVX-512. The same product as the AVX-512 version: each weight of a tile, read where it lies,
// is broadcast against 8 rows of the transposed inputs, every output summed over k in order,
// one FMA per input. What changes is the register budget: a tile of 2 × 8 rows × 6 outputs keeps
// 12 accumulators, 2 inputs and 1 broadcast weight in the 16 ymm registers, so a tile has only
// 16 rows, and each group of 6 weight rows runs over every tile of a 64-row block in turn.
#include <immintrin.h>

#include <algorithm>
#include <vector>

#include "kernels/cpu/line_aligned_buffer.h"

#include "kernels/cpu/transposed_input_gemm.h"

namespace slotserve::kernels::cpu {
namespace {

constexpr int kMaxVecs = 3;  // 8-row vectors of one tile: 3 × 4 accumulators + 3 inputs + 1 weight
// Rows whose tiles run over one group of weight rows before the next group is read: the group's
// kDepth inputs (6 × 64 floats, 1.5 KiB) stay in L1 for all of them, and their inputs (64 rows ×
// 64 inputs, 16 KiB) too. With one 16-row tile per weight read (the first version) the weights'
// six strided streams came from L2 for every 16 rows and the product was ~20% slower than
// OpenBLAS's kernel on its packed panels.
constexpr int kBlockRows = 64;
constexpr int kDepth = 64;  // inputs per pass

// Partial sums ct [o][rows_padded] of rows [first, first + 8 * kVecs) × weight rows
// [o, o + kOuts) over inputs [k_begin, k_end), continuing the sums already there unless
// k_begin is 0.
template <int kVecs, int kOuts>
void Tile(const float* xt, int64_t rows_padded, int first, int in, int k_begin, int k_end,
          const float* w, int o, float* ct) {
  __m256 acc[kOuts][kVecs];
  float* partial[kOuts];
  for (int j = 0; j < kOuts; ++j) {
    partial[j] = ct + static_cast<int64_t>(o + j) * rows_padded + first;
    for (int v = 0; v < kVecs; ++v) {
      acc[j][v] = k_begin == 0 ? _mm256_setzero_ps() : _mm256_loadu_ps(partial[j] + 8 * v);
    }
  }
  const float* row[kOuts];
  for (int j = 0; j < kOuts; ++j) row[j] = w + static_cast<int64_t>(o + j) * in;
  const float* column = xt + k_begin * rows_padded + first;
  for (int k = k_begin; k < k_end; ++k, column += rows_padded) {
    __m256 x[kVecs];
    for (int v = 0; v < kVecs; ++v) x[v] = _mm256_loadu_ps(column + 8 * v);
    for (int j = 0; j < kOuts; ++j) {
      const __m256 weight = _mm256_broadcast_ss(row[j] + k);
      for (int v = 0; v < kVecs; ++v) acc[j][v] = _mm256_fmadd_ps(x[v], weight, acc[j][v]);
    }
  }
  for (int j = 0; j < kOuts; ++j)
    for (int v = 0; v < kVecs; ++v) _mm256_storeu_ps(partial[j] + 8 * v, acc[j][v]);
}

// rows[i] = lane i of the eight vectors in `rows` (an 8 × 8 transpose in registers).
void Transpose8(__m256 rows[8]) {
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

// Every weight row over inputs [k_begin, k_end) for the rows [r, r + 8 * kVecs): kOuts weight
// rows per tile, then the ones left over.
template <int kVecs, int kOuts>
void TileRow(const float* xt, int64_t rows_padded, int r, int in, int k_begin, int k_end,
             const float* w, int outputs, float* ct) {
  int o = 0;
  for (; o + kOuts <= outputs; o += kOuts) {
    Tile<kVecs, kOuts>(xt, rows_padded, r, in, k_begin, k_end, w, o, ct);
  }
  for (; o < outputs; ++o) Tile<kVecs, 1>(xt, rows_padded, r, in, k_begin, k_end, w, o, ct);
}

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
      Transpose8(block);
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
  thread_local std::vector<float> partial_sums;
  float* ct = LineAlignedFloats(partial_sums, static_cast<size_t>(outputs) * rows_padded);
  for (int first = 0; first < rows; first += kBlockRows) {
    const int last = std::min(rows, first + kBlockRows);
    for (int k_begin = 0; k_begin < in; k_begin += kDepth) {
      RowBlock(xt, rows_padded, first, last, in, k_begin, std::min(in, k_begin + kDepth), w,
               outputs, ct);
    }
    if (in == 0) std::fill(ct, ct + static_cast<int64_t>(outputs) * rows_padded, 0.0f);
    // The block's sums, transposed back into y: eight outputs × eight rows at a time.
    int o = 0;
    for (; o + 8 <= outputs; o += 8) {
      for (int r = first; r < last; r += 8) {
        __m256 block[8];
        for (int i = 0; i < 8; ++i) {
          block[i] = _mm256_loadu_ps(ct + static_cast<int64_t>(o + i) * rows_padded + r);
        }
        Transpose8(block);
        for (int i = 0; i < 8 && r + i < last; ++i) {
          float* out = y + static_cast<int64_t>(r + i) * y_stride + o;
          _mm256_storeu_ps(out,
                           accumulate ? _mm256_add_ps(_mm256_loadu_ps(out), block[i]) : block[i]);
        }
      }
    }
    for (; o < outputs; ++o) {
      const float* sums = ct + static_cast<int64_t>(o) * rows_padded;
      for (int r = first; r < last; ++r) {
        float& out = y[static_cast<int64_t>(r) * y_stride + o];
        out = accumulate ? out + sums[r] : sums[r];
      }
    }
  }
}

}  // namespace slotserve::kernels::cpu
