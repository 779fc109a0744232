#include "kernels/cpu/narrow_weight_linear.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/line_aligned_buffer.h"
#include "kernels/cpu/linear_bias.h"
#include "kernels/cpu/parallel_for.h"
#include "kernels/cpu/transposed_input_gemm.h"
#include "kernels/cpu/vector_ops.h"
#include "kernels/float16.h"

namespace slotserve::kernels::cpu {
namespace {

constexpr int kRowBlock = 8;  // input rows of one FusedBlock at most
// Tile of widened weight rows for the transposed-input GEMM: about 256 KiB of F32 (an L2's
// worth).
constexpr int64_t kTileFloats = 64 * 1024;

// The stored element of each dtype (F32 rides along: its "widening" is a plain load).
template <DType D>
using Element = std::conditional_t<D == DType::kI8, int8_t,
                                   std::conditional_t<D == DType::kF32, float, uint16_t>>;

template <DType D>
inline __m256 Widen8(const Element<D>* w) {
  if constexpr (D == DType::kF32) {
    return _mm256_loadu_ps(w);
  } else if constexpr (D == DType::kI8) {
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
  } else {  // I8 (its scale comes after the sum) or F32
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

// The fused GEMV (narrow_weight_fused.inc), compiled once per instruction set. Each takes its
// vector and the loads and multiply-adds from vec_avx2.inc / vec_avx512.inc and defines how to
// widen weights into one and sum one.
namespace avx2 {
#include "kernels/cpu/vec_avx2.inc"
// sums[i] = HorizontalSum(acc[i]). Eight at once by a transposing tree that does each sum's
// additions in HorizontalSum's order (halves, then quarters, then pairs), so either way gives
// the same bits; one at a time the folding of a block's eight or more accumulators cost about
// as much as its multiply-adds for 256 inputs.
template <int kN>
inline void SumEach(const Vec* acc, float* sums) {
  if constexpr (kN == 8) {
    Vec halves[4];  // [acc 2k low + high | acc 2k+1 low + high]
    for (int k = 0; k < 4; ++k) {
      halves[k] = _mm256_add_ps(_mm256_permute2f128_ps(acc[2 * k], acc[2 * k + 1], 0x20),
                                _mm256_permute2f128_ps(acc[2 * k], acc[2 * k + 1], 0x31));
    }
    Vec pairs[2];  // per 128-bit half h: acc 4k + h and 4k + 2 + h, two lanes each
    for (int k = 0; k < 2; ++k) {
      pairs[k] = _mm256_add_ps(_mm256_shuffle_ps(halves[2 * k], halves[2 * k + 1], 0x44),
                               _mm256_shuffle_ps(halves[2 * k], halves[2 * k + 1], 0xEE));
    }
    // Lane 4h + m holds acc 2m + h.
    const Vec total = _mm256_add_ps(_mm256_shuffle_ps(pairs[0], pairs[1], 0x88),
                                    _mm256_shuffle_ps(pairs[0], pairs[1], 0xDD));
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, total);
    for (int i = 0; i < 8; ++i) sums[i] = lanes[4 * (i % 2) + i / 2];
  } else {
    for (int i = 0; i < kN; ++i) sums[i] = HorizontalSum(acc[i]);
  }
}
template <DType D>
inline Vec WidenVec(const Element<D>* w) {
  return Widen8<D>(w);
}
// Weight rows side by side per block of kCount input rows: enough chains for the FMA latency
// while the accumulators, the inputs and one widened weight vector fit the 16 ymm registers.
template <int kCount>
inline constexpr int kOutputsSideBySide = kCount <= 2   ? 4
                                          : kCount <= 4 ? 2
                                                        : 1;
#include "kernels/cpu/narrow_weight_fused.inc"
}  // namespace avx2

// The same GEMV on 512-bit registers (16 floats per FMA, 32 registers), only called after
// CpuHasAvx512(): the library's baseline is x86-64-v3.
#include "kernels/cpu/avx512_functions_begin.inc"
namespace avx512 {
#include "kernels/cpu/vec_avx512.inc"
inline float VecSum(Vec v) {
  const __m256 high = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
  return HorizontalSum(_mm256_add_ps(_mm512_castps512_ps256(v), high));
}
#include "kernels/cpu/sum_each16_avx512.inc"
// sums[i] = VecSum(acc[i]); sixteen at once by SumEach16 (the avx2 SumEach above, one level more).
template <int kN>
inline void SumEach(const Vec* acc, float* sums) {
  if constexpr (kN == 16) {
    SumEach16(acc, sums);
  } else {
    for (int i = 0; i < kN; ++i) sums[i] = VecSum(acc[i]);
  }
}
template <DType D>
inline Vec WidenVec(const Element<D>* w) {
  if constexpr (D == DType::kF32) {
    return _mm512_loadu_ps(w);
  } else if constexpr (D == DType::kI8) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w));
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(bytes));
  } else {
    const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
    if constexpr (D == DType::kF16) {
      return _mm512_cvtph_ps(bits);
    } else {
      return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
    }
  }
}
template <int kCount>
inline constexpr int kOutputsSideBySide = kCount <= 4 ? 4 : 2;
#include "kernels/cpu/narrow_weight_fused.inc"
}  // namespace avx512
#include "kernels/cpu/avx512_functions_end.inc"

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

// Weight rows [o, o + rows) as floats: F32 rows where they are, the others widened into
// `tile` (WidenRows).
template <DType D>
const float* FloatRows(const LinearParams& p, int o, int rows, std::vector<float>& tile) {
  if constexpr (D == DType::kF32) {
    return static_cast<const float*>(p.weight) + static_cast<int64_t>(o) * p.in_features;
  } else {
    // Grown only: a shrink before a short last tile would cost a zero-filling regrowth later.
    const size_t floats = static_cast<size_t>(rows) * p.in_features;
    if (tile.size() < floats) tile.resize(floats);
    WidenRows<D>(p, o, rows, tile.data());
    return tile.data();
  }
}

// Output features [o_begin, o_end), tile by tile (FloatRows, widened in this thread's own tile
// buffer); each tile is multiplied by `xt` (the inputs transposed) through
// transposed_input_gemm.h on the ISA's registers.
template <DType D>
void TiledRange(const LinearParams& p, int o_begin, int o_end, const float* xt, int64_t rows_padded,
                NarrowGemvIsa isa) {
  thread_local std::vector<float> tile;
  const int in = p.in_features;
  const int tile_rows = static_cast<int>(std::max<int64_t>(8, kTileFloats / std::max(in, 1)));
  for (int o = o_begin; o < o_end; o += tile_rows) {
    const int rows = std::min(tile_rows, o_end - o);
    const float* widened = FloatRows<D>(p, o, rows, tile);
    if (isa == NarrowGemvIsa::kAvx512) {
      TransposedInputGemmAvx512(xt, rows_padded, p.rows, in, widened, rows, p.y + o, p.y_stride,
                                p.accumulate);
    } else {
      TransposedInputGemmAvx2(xt, rows_padded, p.rows, in, widened, rows, p.y + o, p.y_stride,
                              p.accumulate);
    }
  }
}

// xt = the inputs transposed (transposed_input_gemm.h), its rows (inputs k) split between the
// compute threads in multiples of 8 (whole register transposes). On one thread the transpose
// was ~3% of a batch-64 step (ABC F16), all of it on the calling thread while the others waited.
// Each range [k0, k1) is the transpose of the columns x[:, k0:k1), written to rows k0.. of xt.
int64_t TransposeInputsInParallel(const LinearParams& p, bool avx512, float* xt) {
  const int64_t rows_padded = TransposedInputFloats(p.rows, /*in=*/1);  // rows rounded up to 16
  // A float moved through a register transpose costs about as much as 8 multiply-adds.
  ParallelFor(
      p.in_features, rows_padded * p.in_features * 8,
      [&](int begin, int end) {
        const float* x = p.x + begin;
        float* out = xt + begin * rows_padded;
        if (avx512) {
          TransposeInputs(x, p.x_stride, p.rows, end - begin, out);
        } else {
          TransposeInputsAvx2(x, p.x_stride, p.rows, end - begin, out);
        }
      },
      /*grain=*/8);
  return rows_padded;
}

// Output features are split between the compute threads (parallel_for.h) in multiples of 16
// (64 bytes of y, so threads share no cache line of y). The widened tiles' inputs are transposed
// once for every part, by all the threads (TransposeInputsInParallel) before the split.
template <DType D>
void Run(const LinearParams& p, NarrowGemvIsa isa) {
  const int64_t work = static_cast<int64_t>(p.rows) * p.in_features * p.out_features;
  const bool avx512 = isa == NarrowGemvIsa::kAvx512;
  const bool fused = p.rows <= FusedMaxRows(isa);
  const float* xt = nullptr;
  int64_t rows_padded = 0;
  if (!fused) {
    thread_local std::vector<float> transposed;
    float* out = LineAlignedFloats(transposed, TransposedInputFloats(p.rows, p.in_features));
    rows_padded = TransposeInputsInParallel(p, avx512, out);
    xt = out;
  }
  ParallelFor(
      p.out_features, work,
      [&](int begin, int end) {
        if (fused && avx512) {
          avx512::FusedRange<D>(p, begin, end);
        } else if (fused) {
          avx2::FusedRange<D>(p, begin, end);
        } else {
          TiledRange<D>(p, begin, end, xt, rows_padded, isa);
        }
        AddBias(p, begin, end);
      },
      /*grain=*/16);
}

}  // namespace

NarrowGemvIsa BestNarrowGemvIsa() {
  return CpuHasAvx512() ? NarrowGemvIsa::kAvx512 : NarrowGemvIsa::kAvx2;
}

void NarrowWeightLinear(const LinearParams& p) { NarrowWeightLinear(p, BestNarrowGemvIsa()); }

void NarrowWeightLinear(const LinearParams& p, NarrowGemvIsa isa) {
  switch (p.weight_dtype) {
    case DType::kF16:
      return Run<DType::kF16>(p, isa);
    case DType::kBF16:
      return Run<DType::kBF16>(p, isa);
    case DType::kI8:
      return Run<DType::kI8>(p, isa);
    case DType::kF32:  // linear.cc sends up to kMaxRowsOwnF32Kernels rows here
      return Run<DType::kF32>(p, isa);
  }
}

}  // namespace slotserve::kernels::cpu
