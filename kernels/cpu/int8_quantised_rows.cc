#include "kernels/cpu/int8_quantised_rows.h"

#include <immintrin.h>

#include <vector>

#include "kernels/int8_activation_blocks.h"

namespace slotserve::kernels::cpu {
namespace {

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

// The sum of a block's 32 signed bytes.
int32_t BlockSum(__m256i block) {
  // Widen to int16 pairs (vpmaddubsw of ones against the signed bytes), then to int32 pairs.
  const __m256i pairs = _mm256_maddubs_epi16(_mm256_set1_epi8(1), block);
  const __m256i quads = _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
  const __m128i four =
      _mm_add_epi32(_mm256_castsi256_si128(quads), _mm256_extracti128_si256(quads, 1));
  const __m128i two = _mm_add_epi32(four, _mm_unpackhi_epi64(four, four));
  return _mm_cvtsi128_si32(_mm_add_epi32(two, _mm_shuffle_epi32(two, 1)));
}

}  // namespace

QuantisedRows QuantisedRowBuffers(int rows, int in_features, RowForm form) {
  thread_local std::vector<int8_t> values;
  thread_local std::vector<int8_t> magnitudes;
  thread_local std::vector<uint8_t> biased;
  thread_local std::vector<int32_t> corrections;
  thread_local std::vector<float> scales;
  QuantisedRows out;
  out.blocks = Int8ActivationBlocks(in_features);
  out.row_bytes = static_cast<int64_t>(out.blocks) * kInt8ActivationBlock;
  values.resize(static_cast<size_t>(out.row_bytes) * rows);
  scales.resize(static_cast<size_t>(out.blocks) * rows);
  out.values = values.data();
  out.scales = scales.data();
  switch (form) {
    case RowForm::kMagnitudes:
      magnitudes.resize(values.size());
      out.magnitudes = magnitudes.data();
      break;
    case RowForm::kBiased:
      biased.resize(values.size());
      out.biased = biased.data();
      break;
    case RowForm::kBiasCorrections:
      corrections.resize(scales.size());
      out.bias_corrections = corrections.data();
      break;
  }
  return out;
}

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
      const int64_t at = r * out.row_bytes + first;
      if (out.biased != nullptr) {  // flipping the sign bit adds 128
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.biased + at),
                            _mm256_xor_si256(block, _mm256_set1_epi8(static_cast<char>(0x80))));
      }
      if (out.magnitudes != nullptr) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.magnitudes + at),
                            _mm256_abs_epi8(block));
      }
      if (out.bias_corrections != nullptr) {
        out.bias_corrections[static_cast<int64_t>(r) * out.blocks + b] = -128 * BlockSum(block);
      }
    }
  }
}

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

}  // namespace slotserve::kernels::cpu
