#include "kernels/cpu/transposed_input_gemm.h"

#include <immintrin.h>

#include <algorithm>
#include <vector>

#include "kernels/cpu/line_aligned_buffer.h"

namespace slotserve::kernels::cpu {

#include "kernels/cpu/avx512_functions_begin.inc"

namespace {

constexpr int kMaxVecs = 4;  // 16-row vectors of one tile
constexpr int kMaxOuts = 6;  // weight rows of one tile: 4 × 6 accumulators + 4 inputs
// Inputs per pass over a row block's tiles: 64 rows × 128 inputs of xt (32 KiB) stay in L1
// while every weight tile of the block runs over them.
constexpr int kDepth = 128;

// Partial sums ct [o][rows_padded] of rows [first, first + 16 * kVecs) × weight rows
// [o, o + kOuts) over inputs [k_begin, k_end), continuing the sums already there unless
// k_begin is 0. Each sum still adds its products in the order of k.
template <int kVecs, int kOuts>
void Tile(const float* xt, int64_t rows_padded, int first, int in, int k_begin, int k_end,
          const float* w, int o, float* ct) {
  __m512 acc[kOuts][kVecs];
  float* partial[kOuts];
  for (int j = 0; j < kOuts; ++j) {
    partial[j] = ct + static_cast<int64_t>(o + j) * rows_padded + first;
    for (int v = 0; v < kVecs; ++v) {
      acc[j][v] = k_begin == 0 ? _mm512_setzero_ps() : _mm512_loadu_ps(partial[j] + 16 * v);
    }
  }
  const float* row[kOuts];
  for (int j = 0; j < kOuts; ++j) row[j] = w + static_cast<int64_t>(o + j) * in;
  const float* column = xt + k_begin * rows_padded + first;
  for (int k = k_begin; k < k_end; ++k, column += rows_padded) {
    __m512 x[kVecs];
    for (int v = 0; v < kVecs; ++v) x[v] = _mm512_loadu_ps(column + 16 * v);
    for (int j = 0; j < kOuts; ++j) {
      const __m512 weight = _mm512_set1_ps(row[j][k]);
      for (int v = 0; v < kVecs; ++v) acc[j][v] = _mm512_fmadd_ps(x[v], weight, acc[j][v]);
    }
  }
  for (int j = 0; j < kOuts; ++j)
    for (int v = 0; v < kVecs; ++v) _mm512_storeu_ps(partial[j] + 16 * v, acc[j][v]);
}

// rows[i] = lane i of the sixteen vectors in `rows` (a 16 × 16 transpose in registers).
void Transpose16(__m512 rows[16]) {
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

template <int kVecs>
void RowBlock(const float* xt, int64_t rows_padded, int first, int in, int k_begin, int k_end,
              const float* w, int outputs, float* ct) {
  int o = 0;
  for (; o + kMaxOuts <= outputs; o += kMaxOuts) {
    Tile<kVecs, kMaxOuts>(xt, rows_padded, first, in, k_begin, k_end, w, o, ct);
  }
  switch (outputs - o) {
    case 5:
      return Tile<kVecs, 5>(xt, rows_padded, first, in, k_begin, k_end, w, o, ct);
    case 4:
      return Tile<kVecs, 4>(xt, rows_padded, first, in, k_begin, k_end, w, o, ct);
    case 3:
      return Tile<kVecs, 3>(xt, rows_padded, first, in, k_begin, k_end, w, o, ct);
    case 2:
      return Tile<kVecs, 2>(xt, rows_padded, first, in, k_begin, k_end, w, o, ct);
    case 1:
      return Tile<kVecs, 1>(xt, rows_padded, first, in, k_begin, k_end, w, o, ct);
    default:
      return;
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
  thread_local std::vector<float> partial_sums;
  float* ct = LineAlignedFloats(partial_sums, static_cast<size_t>(outputs) * rows_padded);
  for (int first = 0; first < rows; first += 16 * kMaxVecs) {
    const int vecs = static_cast<int>(std::min<int64_t>(kMaxVecs, (rows - first + 15) / 16));
    for (int k_begin = 0; k_begin < in; k_begin += kDepth) {
      const int k_end = std::min(in, k_begin + kDepth);
      switch (vecs) {
        case 4:
          RowBlock<4>(xt, rows_padded, first, in, k_begin, k_end, w, outputs, ct);
          break;
        case 3:
          RowBlock<3>(xt, rows_padded, first, in, k_begin, k_end, w, outputs, ct);
          break;
        case 2:
          RowBlock<2>(xt, rows_padded, first, in, k_begin, k_end, w, outputs, ct);
          break;
        default:
          RowBlock<1>(xt, rows_padded, first, in, k_begin, k_end, w, outputs, ct);
          break;
      }
    }
    if (in == 0) std::fill(ct, ct + static_cast<int64_t>(outputs) * rows_padded, 0.0f);
    // The block's sums, transposed back into y: sixteen outputs × sixteen rows at a time.
    const int last = std::min(rows, first + 16 * kMaxVecs);
    int o = 0;
    for (; o + 16 <= outputs; o += 16) {
      for (int r = first; r < last; r += 16) {
        __m512 block[16];
        for (int i = 0; i < 16; ++i) {
          block[i] = _mm512_loadu_ps(ct + static_cast<int64_t>(o + i) * rows_padded + r);
        }
        Transpose16(block);
        for (int i = 0; i < 16 && r + i < last; ++i) {
          float* out = y + static_cast<int64_t>(r + i) * y_stride + o;
          _mm512_storeu_ps(out,
                           accumulate ? _mm512_add_ps(_mm512_loadu_ps(out), block[i]) : block[i]);
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

#include "kernels/cpu/avx512_functions_end.inc"

}  // namespace slotserve::kernels::cpu
