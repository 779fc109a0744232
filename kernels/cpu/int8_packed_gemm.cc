#include "kernels/cpu/int8_packed_gemm.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/int8_quantised_rows.h"
#include "kernels/cpu/parallel_for.h"
#include "kernels/int8_activation_blocks.h"
#include "kernels/int8_packed_weights.h"

// The tiles compiled with AVX-512 VNNI (the library's baseline is x86-64-v3).
#include "kernels/cpu/avx512_vnni_functions_begin.inc"

namespace slotserve::kernels::cpu {
namespace {

constexpr int kQuadsPerBlock = kInt8ActivationBlock / 4;
// One block of 32 inputs for one group of 16 outputs.
constexpr int kPackedBlockBytes = kInt8ActivationBlock * kInt8PackedGroup;
// A tile is kTileRows input rows by kTileGroups groups of 16 outputs: 12 int32 block sums, 12
// float sums, 3 weight vectors and the broadcast row quad, 28 of the 32 vector registers. 4 x 3
// decoded ×1.02-1.28 faster than 6 x 2 at batch 1-64 and 3 x 4 ×0.93-1.03 slower than 4 x 3
// (bench/results/int8_packed_gemm.md).
constexpr int kTileRows = 4;
constexpr int kTileGroups = 3;

// The four bytes of a row's quad as one int32, to broadcast.
inline int32_t QuadAt(const int8_t* at) {
  int32_t quad;
  std::memcpy(&quad, at, sizeof(quad));
  return quad;
}

// Input rows [first, first + kRows) against output groups [group, group + kGroups).
template <int kRows, int kGroups>
void Tile(const LinearParams& p, const QuantisedRows& x, int first, int group) {
  const int64_t group_bytes = x.row_bytes * kInt8PackedGroup;
  const uint8_t* w[kGroups];
  for (int j = 0; j < kGroups; ++j)
    w[j] = static_cast<const uint8_t*>(p.int8_packed_weight) + (group + j) * group_bytes;
  const int8_t* rows[kRows];
  const float* scales[kRows];
  const int32_t* corrections[kRows];
  for (int r = 0; r < kRows; ++r) {
    rows[r] = x.values + static_cast<int64_t>(first + r) * x.row_bytes;
    scales[r] = x.scales + static_cast<int64_t>(first + r) * x.blocks;
    corrections[r] = x.bias_corrections + static_cast<int64_t>(first + r) * x.blocks;
  }
  __m512 acc[kRows][kGroups];
  for (int r = 0; r < kRows; ++r)
    for (int j = 0; j < kGroups; ++j) acc[r][j] = _mm512_setzero_ps();
  for (int b = 0; b < x.blocks; ++b) {
    __m512i dot[kRows][kGroups];
    for (int r = 0; r < kRows; ++r) {
      const __m512i start = _mm512_set1_epi32(corrections[r][b]);
      for (int j = 0; j < kGroups; ++j) dot[r][j] = start;
    }
    const int64_t block_at = int64_t{b} * kPackedBlockBytes;
    for (int q = 0; q < kQuadsPerBlock; ++q) {
      __m512i wq[kGroups];
      for (int j = 0; j < kGroups; ++j) wq[j] = _mm512_loadu_si512(w[j] + block_at + 64 * q);
      for (int r = 0; r < kRows; ++r) {
        const __m512i xq = _mm512_set1_epi32(QuadAt(rows[r] + b * kInt8ActivationBlock + 4 * q));
        for (int j = 0; j < kGroups; ++j) dot[r][j] = _mm512_dpbusd_epi32(dot[r][j], wq[j], xq);
      }
    }
    for (int r = 0; r < kRows; ++r) {
      const __m512 scale = _mm512_set1_ps(scales[r][b]);
      for (int j = 0; j < kGroups; ++j)
        acc[r][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[r][j]), scale, acc[r][j]);
    }
  }
  for (int j = 0; j < kGroups; ++j) {
    const int o = (group + j) * kInt8PackedGroup;
    const int count = std::min(kInt8PackedGroup, p.out_features - o);
    const __mmask16 mask = static_cast<__mmask16>((1u << count) - 1);
    const __m512 weight_scale = _mm512_maskz_loadu_ps(mask, p.weight_scale + o);
    const __m512 bias =
        p.bias != nullptr ? _mm512_maskz_loadu_ps(mask, p.bias + o) : _mm512_setzero_ps();
    for (int r = 0; r < kRows; ++r) {
      float* y = p.y + static_cast<int64_t>(first + r) * p.y_stride + o;
      __m512 value = _mm512_mul_ps(acc[r][j], weight_scale);
      if (p.accumulate) value = _mm512_add_ps(_mm512_maskz_loadu_ps(mask, y), value);
      if (p.bias != nullptr) value = _mm512_add_ps(value, bias);
      _mm512_mask_storeu_ps(y, mask, value);
    }
  }
}

// The last `rows` input rows from `first` (fewer than kTileRows) as one tile of that height.
template <int kGroups, int kRows = kTileRows - 1>
void LastRows(const LinearParams& p, const QuantisedRows& x, int first, int rows, int group) {
  if constexpr (kRows > 0) {
    if (rows == kRows) return Tile<kRows, kGroups>(p, x, first, group);
    LastRows<kGroups, kRows - 1>(p, x, first, rows, group);
  }
}

// Every input row against output groups [group, group + kGroups), kTileRows rows at a time.
template <int kGroups>
void RowTiles(const LinearParams& p, const QuantisedRows& x, int group) {
  int first = 0;
  for (; first + kTileRows <= p.rows; first += kTileRows)
    Tile<kTileRows, kGroups>(p, x, first, group);
  LastRows<kGroups>(p, x, first, p.rows - first, group);
}

void GroupRange(const LinearParams& p, const QuantisedRows& x, int begin, int end) {
  int group = begin;
  for (; group + kTileGroups <= end; group += kTileGroups) RowTiles<kTileGroups>(p, x, group);
  for (; group < end; ++group) RowTiles<1>(p, x, group);
}

}  // namespace
}  // namespace slotserve::kernels::cpu

#include "kernels/cpu/avx512_functions_end.inc"

namespace slotserve::kernels::cpu {

void Int8PackedGemm(const LinearParams& p) {
  const QuantisedRows rows = QuantisedRowBuffers(p.rows, p.in_features, RowForm::kBiasCorrections);
  ParallelFor(p.rows, static_cast<int64_t>(p.rows) * p.in_features * 8,
              [&](int begin, int end) { QuantiseRows(p, rows, begin, end); });
  const int groups = (p.out_features + kInt8PackedGroup - 1) / kInt8PackedGroup;
  const int64_t work = static_cast<int64_t>(p.rows) * p.in_features * p.out_features;
  ParallelFor(
      groups, work, [&](int begin, int end) { GroupRange(p, rows, begin, end); },
      /*grain=*/kTileGroups);
}

}  // namespace slotserve::kernels::cpu
