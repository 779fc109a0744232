#include "kernels/cpu/narrow_weight_linear.h"

#include <cblas.h>
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "kernels/cpu/parallel_for.h"
#include "kernels/float16.h"

namespace slotserve::kernels::cpu {
namespace {

constexpr int kRowBlock = 8;  // input rows of one FusedBlock at most
// Tile of widened weight rows for the sgemm path: about 256 KiB of F32 (an L2's worth).
constexpr int64_t kTileFloats = 64 * 1024;

// The stored element of each narrow dtype.
template <DType D>
using Element = std::conditional_t<D == DType::kI8, int8_t, uint16_t>;

template <DType D>
inline __m256 Widen8(const Element<D>* w) {
  if constexpr (D == DType::kI8) {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(w));
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes));
  } else {
    const __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w));
    if constexpr (D == DType::kF16) {
      return _mm256_cvtph_ps(bits);
    } else {
      return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16));
    }
  }
}

template <DType D>
inline float Widen1(Element<D> w) {
  if constexpr (D == DType::kF16) {
    return HalfToFloat(w);
  } else if constexpr (D == DType::kBF16) {
    return BFloat16ToFloat(w);
  } else {
    return static_cast<float>(w);
  }
}

// The factor of output row o: its scale for int8, 1 for the 16-bit dtypes.
template <DType D>
inline float RowScale(const LinearParams& p, int o) {
  if constexpr (D == DType::kI8) {
    return p.weight_scale[o];
  } else {
    return 1.0f;
  }
}

inline float HorizontalSum(__m256 v) {
  const __m128 sum4 = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 sum2 = _mm_add_ps(sum4, _mm_movehl_ps(sum4, sum4));
  return _mm_cvtss_f32(_mm_add_ss(sum2, _mm_shuffle_ps(sum2, sum2, 0x55)));
}

// Rows [first, first + kCount) (kCount <= kRowBlock) against weight rows [o_begin, o_end),
// kOut weight rows at a time. Each (input row, output) pair keeps one accumulator over k; a batch
// of one or two rows alone would be one or two dependent FMA chains, waiting on the FMA latency
// each step, so several weight rows run side by side to keep kOut * kCount chains in flight.
// Every output's sum is formed in the same order whatever kOut is (bitwise the same result).
template <DType D, int kCount, int kOut>
void FusedBlock(const LinearParams& p, int first, int o_begin, int o_end) {
  const auto* weights = static_cast<const Element<D>*>(p.weight);
  const int in = p.in_features;
  const int vector_end = in - in % 8;
  const float* x[kRowBlock];
  for (int r = 0; r < kCount; ++r) x[r] = p.x + static_cast<int64_t>(first + r) * p.x_stride;
  int o = o_begin;
  for (; o + kOut <= o_end; o += kOut) {
    const Element<D>* w = weights + static_cast<int64_t>(o) * in;
    __m256 acc[kOut][kCount];
    for (int j = 0; j < kOut; ++j)
      for (int r = 0; r < kCount; ++r) acc[j][r] = _mm256_setzero_ps();
    for (int k = 0; k < vector_end; k += 8) {
      __m256 xk[kCount];
      for (int r = 0; r < kCount; ++r) xk[r] = _mm256_loadu_ps(x[r] + k);
      for (int j = 0; j < kOut; ++j) {
        const __m256 wk = Widen8<D>(w + static_cast<int64_t>(j) * in + k);
        for (int r = 0; r < kCount; ++r) acc[j][r] = _mm256_fmadd_ps(wk, xk[r], acc[j][r]);
      }
    }
    for (int j = 0; j < kOut; ++j) {
      const Element<D>* w_row = w + static_cast<int64_t>(j) * in;
      for (int r = 0; r < kCount; ++r) {
        float sum = HorizontalSum(acc[j][r]);
        for (int k = vector_end; k < in; ++k) sum += Widen1<D>(w_row[k]) * x[r][k];
        sum *= RowScale<D>(p, o + j);
        float& y = p.y[static_cast<int64_t>(first + r) * p.y_stride + o + j];
        y = p.accumulate ? y + sum : sum;
      }
    }
  }
  if constexpr (kOut > 1) {
    if (o < o_end) FusedBlock<D, kCount, 1>(p, first, o, o_end);
  }
}

// Weight rows side by side per block of kCount input rows: enough chains for the FMA latency
// while the accumulators, the inputs and one widened weight vector fit the 16 ymm registers.
template <int kCount>
inline constexpr int kOutputsSideBySide = kCount <= 2   ? 4
                                          : kCount <= 4 ? 2
                                                        : 1;

template <DType D>
void FusedRange(const LinearParams& p, int o_begin, int o_end) {
  int first = 0;
  for (; first + 8 <= p.rows; first += 8) {
    FusedBlock<D, 8, kOutputsSideBySide<8>>(p, first, o_begin, o_end);
  }
  if (first + 4 <= p.rows) {
    FusedBlock<D, 4, kOutputsSideBySide<4>>(p, first, o_begin, o_end);
    first += 4;
  }
  switch (p.rows - first) {
    case 1:
      FusedBlock<D, 1, kOutputsSideBySide<1>>(p, first, o_begin, o_end);
      break;
    case 2:
      FusedBlock<D, 2, kOutputsSideBySide<2>>(p, first, o_begin, o_end);
      break;
    case 3:
      FusedBlock<D, 3, kOutputsSideBySide<3>>(p, first, o_begin, o_end);
      break;
    default:
      break;
  }
}

// Weight rows [o, o + rows) widened (and, for int8, scaled) into `out` [rows, in].
template <DType D>
void WidenRows(const LinearParams& p, int o, int rows, float* out) {
  const int in = p.in_features;
  const Element<D>* w = static_cast<const Element<D>*>(p.weight) + static_cast<int64_t>(o) * in;
  for (int r = 0; r < rows; ++r) {
    const Element<D>* row = w + static_cast<int64_t>(r) * in;
    float* target = out + static_cast<int64_t>(r) * in;
    const __m256 scale = _mm256_set1_ps(RowScale<D>(p, o + r));
    int i = 0;
    for (; i + 8 <= in; i += 8)
      _mm256_storeu_ps(target + i, _mm256_mul_ps(Widen8<D>(row + i), scale));
    for (; i < in; ++i) target[i] = Widen1<D>(row[i]) * RowScale<D>(p, o + r);
  }
}

// Output features [o_begin, o_end), tile by tile, in this thread's own tile buffer.
template <DType D>
void TiledRange(const LinearParams& p, int o_begin, int o_end) {
  thread_local std::vector<float> tile;
  const int in = p.in_features;
  const int tile_rows = static_cast<int>(std::max<int64_t>(8, kTileFloats / std::max(in, 1)));
  tile.resize(static_cast<size_t>(tile_rows) * in);
  const float beta = p.accumulate ? 1.0f : 0.0f;
  for (int o = o_begin; o < o_end; o += tile_rows) {
    const int rows = std::min(tile_rows, o_end - o);
    WidenRows<D>(p, o, rows, tile.data());
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, p.rows, rows, in, 1.0f, p.x,
                static_cast<int>(p.x_stride), tile.data(), in, beta, p.y + o,
                static_cast<int>(p.y_stride));
  }
}

// Output features are split between the compute threads (parallel_for.h) in multiples of 16
// (64 bytes of y, so threads share no cache line of y); inside a part OpenBLAS runs
// single-threaded (base/compute_threads.h).
template <DType D>
void Run(const LinearParams& p) {
  const int64_t work = static_cast<int64_t>(p.rows) * p.in_features * p.out_features;
  const bool fused = p.rows <= kFusedRows;
  ParallelFor(
      p.out_features, work,
      [&](int begin, int end) {
        if (fused) {
          FusedRange<D>(p, begin, end);
        } else {
          TiledRange<D>(p, begin, end);
        }
      },
      /*grain=*/16);
}

}  // namespace

void NarrowWeightLinear(const LinearParams& p) {
  switch (p.weight_dtype) {
    case DType::kF16:
      return Run<DType::kF16>(p);
    case DType::kBF16:
      return Run<DType::kBF16>(p);
    case DType::kI8:
      return Run<DType::kI8>(p);
    case DType::kF32:
      return;  // not a narrow dtype: linear.cc's OpenBLAS path
  }
}

}  // namespace slotserve::kernels::cpu
