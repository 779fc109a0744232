#include "kernels/cpu/int8_dot_linear.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/int8_quantised_rows.h"
#include "kernels/cpu/linear_bias.h"
#include "kernels/cpu/parallel_for.h"
#include "kernels/cpu/vector_ops.h"  // HorizontalSum
#include "kernels/int8_activation_blocks.h"

namespace slotserve::kernels::cpu {
namespace {

namespace avx2 {
// vpmaddubsw sums adjacent u8 x s8 pairs into int16 (at most 2 * 127 * 127 = 32,258: no
// saturation), vpmaddwd against ones sums pairs of those into int32.
#define SLOTSERVE_INT8_BLOCK_DOT(magnitudes, signed_weights) \
  _mm256_madd_epi16(_mm256_maddubs_epi16(magnitudes, signed_weights), _mm256_set1_epi16(1))
#include "kernels/cpu/int8_dot_rows.inc"
#undef SLOTSERVE_INT8_BLOCK_DOT
}  // namespace avx2

// The same kernels compiled with AVX-512 VNNI (the library's baseline is x86-64-v3).
#include "kernels/cpu/avx512_vnni_functions_begin.inc"
namespace vnni {
#define SLOTSERVE_INT8_BLOCK_DOT(magnitudes, signed_weights) \
  _mm256_dpbusd_epi32(_mm256_setzero_si256(), magnitudes, signed_weights)
#include "kernels/cpu/int8_dot_rows.inc"
#undef SLOTSERVE_INT8_BLOCK_DOT
#include "kernels/cpu/int8_dot_wide.inc"
}  // namespace vnni
#include "kernels/cpu/avx512_functions_end.inc"

}  // namespace

Int8DotIsa BestInt8DotIsa() {
  return CpuHasAvx512Vnni() ? Int8DotIsa::kAvx512Vnni : Int8DotIsa::kAvx2;
}

void Int8DotLinear(const LinearParams& p, Int8DotIsa isa) {
  const QuantisedRows rows = QuantisedRowBuffers(
      p.rows, p.in_features,
      isa == Int8DotIsa::kAvx512VnniWide ? RowForm::kBiased : RowForm::kMagnitudes);
  ParallelFor(p.rows, static_cast<int64_t>(p.rows) * p.in_features * 8,
              [&](int begin, int end) { QuantiseRows(p, rows, begin, end); });
  const int64_t work = static_cast<int64_t>(p.rows) * p.in_features * p.out_features;
  ParallelFor(
      p.out_features, work,
      [&](int begin, int end) {
        if (isa == Int8DotIsa::kAvx512VnniWide) {
          vnni::WideDotRange(p, rows, begin, end);
        } else if (isa == Int8DotIsa::kAvx512Vnni) {
          vnni::DotRange(p, rows, begin, end);
        } else {
          avx2::DotRange(p, rows, begin, end);
        }
        AddBias(p, begin, end);
      },
      /*grain=*/16);
}

}  // namespace slotserve::kernels::cpu
