#include "tests/unit/kernels/test_data.h"

#include <cmath>
#include <random>
#include <sstream>

#include "gtest/gtest.h"

namespace slotserve::kernels::testing {

std::vector<float> RandomFloats(std::size_t count, uint32_t seed, float low, float high) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(low, high);
  std::vector<float> values(count);
  for (float& v : values) v = dist(rng);
  return values;
}

std::vector<int32_t> RandomInts(std::size_t count, uint32_t seed, int32_t low, int32_t high) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> dist(low, high);
  std::vector<int32_t> values(count);
  for (int32_t& v : values) v = dist(rng);
  return values;
}

void ExpectAllClose(const std::vector<float>& got, const std::vector<float>& want, float tolerance,
                    const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  std::ostringstream first;
  int mismatches = 0;
  double worst = 0.0;
  std::size_t worst_index = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    if (std::isnan(g) && std::isnan(w)) continue;
    const double error = std::abs(g - w) / (1.0 + std::abs(w));
    const bool bad = !(error <= tolerance);  // NaN error is bad too
    if (bad && ++mismatches <= 5) first << "\n  [" << i << "] got " << g << ", want " << w;
    if (bad && !(error <= worst)) {
      worst = std::isnan(error) ? INFINITY : error;
      worst_index = i;
    }
  }
  EXPECT_EQ(mismatches, 0) << what << ": " << mismatches << " of " << got.size()
                           << " values differ by more than " << tolerance
                           << " * (1 + |want|); worst relative error " << worst << " at ["
                           << worst_index << "]" << first.str();
}

std::vector<float> Columns(const std::vector<float>& matrix, int rows, int64_t stride, int cols,
                           int64_t first_col) {
  std::vector<float> packed;
  packed.reserve(static_cast<std::size_t>(rows) * cols);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) packed.push_back(matrix[r * stride + first_col + c]);
  }
  return packed;
}

}  // namespace slotserve::kernels::testing
