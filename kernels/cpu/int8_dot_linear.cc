#include "kernels/cpu/int8_dot_linear.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/linear_bias.h"
#include "kernels/cpu/parallel_for.h"
#include "kernels/int8_activation_blocks.h"

namespace slotserve::kernels::cpu {
namespace {

// The quantised input rows: values q_x, their magnitudes |q_x| (vpdpbusd's and vpmaddubsw's
// unsigned operand, computed once per row instead of once per weight row) and the blocks'
// scales. Rows are padded with zeros to whole blocks.
struct QuantisedRows {
  int8_t* values = nullptr;
  int8_t* magnitudes = nullptr;
  uint8_t* biased = nullptr;  // q_x + 128, the wide kernels' unsigned operand (else null)
  float* scales = nullptr;
  int64_t row_bytes = 0;  // blocks * kInt8ActivationBlock
  int blocks = 0;
};

inline float HorizontalSum(__m256 v) {
  const __m128 sum4 = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 sum2 = _mm_add_ps(sum4, _mm_movehl_ps(sum4, sum4));
  return _mm_cvtss_f32(_mm_add_ss(sum2, _mm_shuffle_ps(sum2, sum2, 0x55)));
}

inline float HorizontalMax(__m256 v) {
  const __m128 max4 = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 max2 = _mm_max_ps(max4, _mm_movehl_ps(max4, max4));
  return _mm_cvtss_f32(_mm_max_ss(max2, _mm_shuffle_ps(max2, max2, 0x55)));
}

// One whole block of 32 values, vectorised: the same float operations as the scalar
// QuantiseActivationBlock (max of |x|, one division, one multiplication, round to nearest
// even under the default MXCSR), so both give the same bytes.
float QuantiseWholeBlock(const float* x, int8_t* q) {
  const __m256 sign_bit = _mm256_set1_ps(-0.0f);
  __m256 v[4];
  __m256 amax = _mm256_setzero_ps();
  for (int j = 0; j < 4; ++j) {
    v[j] = _mm256_loadu_ps(x + 8 * j);
    amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign_bit, v[j]));
  }
  const float largest = HorizontalMax(amax);
  const __m256 inverse = _mm256_set1_ps(largest > 0.0f ? 127.0f / largest : 0.0f);
  __m256i ints[4];
  for (int j = 0; j < 4; ++j) ints[j] = _mm256_cvtps_epi32(_mm256_mul_ps(v[j], inverse));
  // Saturating packs interleave the 128-bit lanes; the permutation puts the 32 bytes back
  // in order.
  const __m256i packed = _mm256_packs_epi16(_mm256_packs_epi32(ints[0], ints[1]),
                                            _mm256_packs_epi32(ints[2], ints[3]));
  const __m256i ordered =
      _mm256_permutevar8x32_epi32(packed, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), ordered);
  return largest / 127.0f;
}

// One whole block of 32 values rounded as QuantiseWholeBlock rounds it, written back as the
// floats q * d it stands for.
void RoundWholeBlock(const float* x, float* out) {
  int8_t q[kInt8ActivationBlock];
  const __m256 d = _mm256_set1_ps(QuantiseWholeBlock(x, q));
  for (int j = 0; j < 4; ++j) {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(q + 8 * j));
    _mm256_storeu_ps(out + 8 * j,
                     _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes)), d));
  }
}

// Quantises rows [begin, end) of p.x into `out`'s buffers.
void QuantiseRows(const LinearParams& p, const QuantisedRows& out, int begin, int end) {
  const int in = p.in_features;
  for (int r = begin; r < end; ++r) {
    const float* x = p.x + static_cast<int64_t>(r) * p.x_stride;
    int8_t* values = out.values + r * out.row_bytes;
    float* scales = out.scales + static_cast<int64_t>(r) * out.blocks;
    for (int b = 0; b < out.blocks; ++b) {
      const int first = b * kInt8ActivationBlock;
      int8_t* q = values + first;
      if (first + kInt8ActivationBlock <= in) {
        scales[b] = QuantiseWholeBlock(x + first, q);
      } else {
        for (int i = 0; i < kInt8ActivationBlock; ++i) q[i] = 0;
        scales[b] = QuantiseActivationBlock(x + first, in - first, q);
      }
      const __m256i block = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
      if (out.biased != nullptr) {  // flipping the sign bit adds 128
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.biased + r * out.row_bytes + first),
                            _mm256_xor_si256(block, _mm256_set1_epi8(static_cast<char>(0x80))));
      } else {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.magnitudes + r * out.row_bytes + first),
                            _mm256_abs_epi8(block));
      }
    }
  }
}

namespace avx2 {
// vpmaddubsw sums adjacent u8 x s8 pairs into int16 (at most 2 * 127 * 127 = 32,258: no
// saturation), vpmaddwd against ones sums pairs of those into int32.
#define SLOTSERVE_INT8_BLOCK_DOT(magnitudes, signed_weights) \
  _mm256_madd_epi16(_mm256_maddubs_epi16(magnitudes, signed_weights), _mm256_set1_epi16(1))
#include "kernels/cpu/int8_dot_rows.inc"
#undef SLOTSERVE_INT8_BLOCK_DOT
}  // namespace avx2

// The same kernels compiled with AVX-512 VNNI (the library's baseline is x86-64-v3): only
// called after CpuHasAvx512Vnni().
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512vl,avx512bw,avx512vnni"))), \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512vnni")
#endif
namespace vnni {
#define SLOTSERVE_INT8_BLOCK_DOT(magnitudes, signed_weights) \
  _mm256_dpbusd_epi32(_mm256_setzero_si256(), magnitudes, signed_weights)
#include "kernels/cpu/int8_dot_rows.inc"
#undef SLOTSERVE_INT8_BLOCK_DOT
#include "kernels/cpu/int8_dot_wide.inc"
}  // namespace vnni
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

}  // namespace

void RoundActivationRows(const LinearParams& p, float* out, int begin, int end) {
  const int in = p.in_features;
  for (int r = begin; r < end; ++r) {
    const float* x = p.x + static_cast<int64_t>(r) * p.x_stride;
    float* row = out + static_cast<int64_t>(r) * in;
    int first = 0;
    for (; first + kInt8ActivationBlock <= in; first += kInt8ActivationBlock) {
      RoundWholeBlock(x + first, row + first);
    }
    if (first < in) {
      int8_t q[kInt8ActivationBlock];
      const float d = QuantiseActivationBlock(x + first, in - first, q);
      for (int i = 0; i < in - first; ++i) row[first + i] = q[i] * d;
    }
  }
}

Int8DotIsa BestInt8DotIsa() {
  return CpuHasAvx512Vnni() ? Int8DotIsa::kAvx512Vnni : Int8DotIsa::kAvx2;
}

void Int8DotLinear(const LinearParams& p, Int8DotIsa isa) {
  // Per calling thread, reused between calls: the workers only read it.
  thread_local std::vector<int8_t> values;
  thread_local std::vector<int8_t> magnitudes;
  thread_local std::vector<uint8_t> biased;
  thread_local std::vector<float> scales;
  QuantisedRows rows;
  rows.blocks = Int8ActivationBlocks(p.in_features);
  rows.row_bytes = static_cast<int64_t>(rows.blocks) * kInt8ActivationBlock;
  values.resize(static_cast<size_t>(rows.row_bytes) * p.rows);
  scales.resize(static_cast<size_t>(rows.blocks) * p.rows);
  rows.values = values.data();
  if (isa == Int8DotIsa::kAvx512VnniWide) {
    biased.resize(values.size());
    rows.biased = biased.data();
  } else {
    magnitudes.resize(values.size());
    rows.magnitudes = magnitudes.data();
  }
  rows.scales = scales.data();

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
