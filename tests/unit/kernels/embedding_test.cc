// Embedding: optimised backends against the reference for every table dtype, the cpu's read of
// a packed int8 table (a table tied to an int8-activations head) against the row-major one, and
// exact rows for the reference.
#include "kernels/embedding.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/float16.h"
#include "kernels/int8_packed_weights.h"
#include "tests/unit/kernels/device_array.h"
#include "tests/unit/kernels/test_backends.h"
#include "tests/unit/kernels/test_data.h"

namespace slotserve::kernels::testing {
namespace {

// The table's bytes in `dtype`, as 16-bit words (F32 takes two words per value; I8 holds
// round(127 * value) in one byte per value, padded to a whole word).
std::vector<uint16_t> EncodeTable(const std::vector<float>& values, DType dtype) {
  if (dtype == DType::kI8) {
    std::vector<int8_t> bytes(values.size() + 1);
    for (std::size_t i = 0; i < values.size(); ++i) {
      bytes[i] = static_cast<int8_t>(std::nearbyint(127.0f * values[i]));
    }
    std::vector<uint16_t> words(bytes.size() / 2);
    std::memcpy(words.data(), bytes.data(), words.size() * sizeof(uint16_t));
    return words;
  }
  if (dtype == DType::kF32) {
    std::vector<uint16_t> words(values.size() * 2);
    std::memcpy(words.data(), values.data(), values.size() * sizeof(float));
    return words;
  }
  std::vector<uint16_t> words(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    words[i] = dtype == DType::kF16 ? FloatToHalf(values[i]) : FloatToBFloat16(values[i]);
  }
  return words;
}

std::vector<float> RunEmbedding(Backend backend, const std::vector<uint16_t>& table, DType dtype,
                                int vocab, int dim, const std::vector<int32_t>& tokens, float scale,
                                int64_t out_stride, const std::vector<float>& row_scales = {}) {
  DeviceArray<uint16_t> table_dev(backend, table);
  DeviceArray<float> row_scales_dev(backend, row_scales);
  DeviceArray<int32_t> tokens_dev(backend, tokens);
  const int rows = static_cast<int>(tokens.size());
  DeviceArray<float> out_dev(backend, std::vector<float>(rows * out_stride, -3.0f));
  EmbeddingParams p;
  p.table = table_dev.data();
  p.table_dtype = dtype;
  p.table_scale = row_scales.empty() ? nullptr : row_scales_dev.data();
  p.vocab = vocab;
  p.dim = dim;
  p.tokens = tokens_dev.data();
  p.rows = rows;
  p.scale = scale;
  p.out = out_dev.data();
  p.out_stride = out_stride;
  LaunchEmbedding(backend, p);
  return out_dev.Download();
}

class EmbeddingTest : public ::testing::TestWithParam<BackendCase> {};

TEST_P(EmbeddingTest, MatchesReferenceOverShapes) {
  const BackendCase c = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(c.backend);
  uint32_t seed = 300;
  for (int vocab : {1, 17, 500}) {
    for (int dim : {1, 6, 256, 259}) {
      for (int rows : {1, 5, 64}) {
        const auto table = EncodeTable(RandomFloats(vocab * dim, ++seed), c.dtype);
        const auto tokens = RandomInts(rows, ++seed, 0, vocab - 1);
        // I8 rows: each with its own scale (an int8 embedding's per-vocabulary-row scales).
        const auto row_scales = c.dtype == DType::kI8 ? RandomFloats(vocab, ++seed, 0.001f, 0.02f)
                                                      : std::vector<float>{};
        const auto want = RunEmbedding(Backend::kReference, table, c.dtype, vocab, dim, tokens,
                                       16.0f, dim + 3, row_scales);
        const auto got =
            RunEmbedding(c.backend, table, c.dtype, vocab, dim, tokens, 16.0f, dim + 3, row_scales);
        ExpectAllClose(got, want, c.tolerance,
                       (::testing::Message() << DTypeName(c.dtype) << " vocab=" << vocab
                                             << " dim=" << dim << " rows=" << rows)
                           .GetString());
        if (HasFailure()) return;
      }
    }
  }
}

std::vector<BackendCase> EmbeddingCases() {
  std::vector<BackendCase> cases;
  for (Backend b : OptimisedBackends()) {
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16, DType::kI8}) {
      cases.push_back({b, dtype, DefaultTolerance(b)});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Backends, EmbeddingTest, ::testing::ValuesIn(EmbeddingCases()),
                         [](const auto& info) { return CaseName(info.param); });

TEST(EmbeddingPackedTableTest, CpuReadsThePackedCopyAsTheRowMajorTable) {
  uint32_t seed = 900;
  for (int vocab : {1, 17, 40}) {
    for (int dim : {4, 6, 256, 259}) {
      const std::vector<float> values = RandomFloats(vocab * dim, ++seed);
      std::vector<int8_t> q(values.size());
      for (std::size_t i = 0; i < q.size(); ++i) {
        q[i] = static_cast<int8_t>(std::nearbyint(127.0f * values[i]));
      }
      std::vector<uint8_t> packed(Int8PackedWeightBytes(vocab, dim));
      PackInt8Weights(q.data(), vocab, dim, packed.data());
      const auto row_scales = RandomFloats(vocab, ++seed, 0.001f, 0.02f);
      const auto tokens = RandomInts(9, ++seed, 0, vocab - 1);
      const int64_t stride = dim + 3;
      const auto want = RunEmbedding(Backend::kReference, EncodeTable(values, DType::kI8),
                                     DType::kI8, vocab, dim, tokens, 16.0f, stride, row_scales);
      std::vector<float> got(tokens.size() * stride, -3.0f);
      EmbeddingParams p;
      p.table_int8_packed = packed.data();
      p.table_dtype = DType::kI8;
      p.table_scale = row_scales.data();
      p.vocab = vocab;
      p.dim = dim;
      p.tokens = tokens.data();
      p.rows = static_cast<int>(tokens.size());
      p.scale = 16.0f;
      p.out = got.data();
      p.out_stride = stride;
      LaunchEmbedding(Backend::kCpu, p);
      ExpectAllClose(got, want, 1e-6f,
                     (::testing::Message() << "vocab=" << vocab << " dim=" << dim).GetString());
      if (HasFailure()) return;
    }
  }
}

TEST(EmbeddingReferenceTest, CopiesScaledRows) {
  const std::vector<float> table = {1, 2, 3, 4, 5, 6};  // vocab 3, dim 2
  const std::vector<int32_t> tokens = {2, 0, 2};
  std::vector<float> out(3 * 3, -1.0f);
  EmbeddingParams p;
  p.table = table.data();
  p.vocab = 3;
  p.dim = 2;
  p.tokens = tokens.data();
  p.rows = 3;
  p.scale = 0.5f;
  p.out = out.data();
  p.out_stride = 3;
  LaunchEmbedding(Backend::kReference, p);
  EXPECT_EQ(out, (std::vector<float>{2.5f, 3, -1, 0.5f, 1, -1, 2.5f, 3, -1}));
}

}  // namespace
}  // namespace slotserve::kernels::testing
