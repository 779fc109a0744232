// The cpu attention inner loops (kernels/cpu/row_products.h and SoftmaxInPlace in
// vector_ops.h) against sums in double, over row counts and widths around the vector width (8)
// and the eight-row blocks, with padded row strides. Compiled with -march=x86-64-v3 like the
// kernels library, so the AVX2 paths are the ones tested.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/row_products.h"
#include "kernels/cpu/vector_ops.h"
#include "tests/unit/kernels/test_data.h"

namespace slotserve::kernels::testing {
namespace {

constexpr int kRowCounts[] = {1, 7, 8, 9, 16, 31, 33, 80, 257};
constexpr int kWidths[] = {1, 5, 8, 13, 64, 65, 128};

TEST(RowProductsTest, BuiltWithTheVectorPath) {
#if !(defined(__AVX2__) && defined(__FMA__))
  FAIL() << "row_products_test must be compiled with AVX2 + FMA to test the kernels' path";
#endif
}

TEST(RowProductsTest, DotRowsMatchesDoubleSums) {
  for (int n : kRowCounts) {
    for (int d : kWidths) {
      const int64_t stride = d + 3;
      const std::vector<float> rows = RandomFloats(n * stride, 11 + n * 131 + d);
      const std::vector<float> x = RandomFloats(d, 7 + d);
      std::vector<float> got(n, std::nanf(""));
      cpu::DotRows(x.data(), rows.data(), stride, n, d, got.data());
      for (int j = 0; j < n; ++j) {
        double want = 0.0, magnitude = 0.0;
        for (int i = 0; i < d; ++i) {
          want += double{rows[j * stride + i]} * x[i];
          magnitude += std::abs(double{rows[j * stride + i]} * x[i]);
        }
        ASSERT_NEAR(got[j], want, 1e-6 * (1.0 + magnitude))
            << "n=" << n << " d=" << d << " j=" << j;
      }
    }
  }
}

TEST(RowProductsTest, WeightedRowSumMatchesDoubleSumsAndOverwritesOut) {
  for (int n : kRowCounts) {
    for (int d : kWidths) {
      const int64_t stride = d + 5;
      const std::vector<float> rows = RandomFloats(n * stride, 17 + n * 7 + d);
      const std::vector<float> weights = RandomFloats(n, 3 + n, 0.0f, 1.0f);
      std::vector<float> got(d, 1e6f);  // stale contents must not leak into the result
      cpu::WeightedRowSum(weights.data(), rows.data(), stride, n, d, got.data());
      for (int i = 0; i < d; ++i) {
        double want = 0.0, magnitude = 0.0;
        for (int j = 0; j < n; ++j) {
          want += double{weights[j]} * rows[j * stride + i];
          magnitude += std::abs(double{weights[j]} * rows[j * stride + i]);
        }
        ASSERT_NEAR(got[i], want, 1e-6 * (1.0 + magnitude))
            << "n=" << n << " d=" << d << " i=" << i;
      }
    }
  }
}

// Prefetching is a hint: with companion rows (fewer, as many, or more than the loop's own, in
// another buffer), and with or without the look-ahead over its own rows, both loops give
// exactly the results they give without any.
TEST(RowProductsTest, PrefetchingChangesNoResult) {
  for (int n : kRowCounts) {
    for (int d : kWidths) {
      const int64_t stride = d + 3;
      const std::vector<float> rows = RandomFloats(n * stride, 5 + n * 17 + d);
      const std::vector<float> x = RandomFloats(std::max(n, d), 9 + d, 0.0f, 1.0f);
      std::vector<float> plain_dots(n), plain_sum(d);
      cpu::DotRows(x.data(), rows.data(), stride, n, d, plain_dots.data());
      cpu::WeightedRowSum(x.data(), rows.data(), stride, n, d, plain_sum.data());
      for (int companion_rows : {0, 1, n, n + 9}) {
        const std::vector<float> companion = RandomFloats(companion_rows * stride + 1, 23 + n);
        for (bool own_rows_ahead : {false, true}) {
          const cpu::RowPrefetch<float> prefetch{companion.data(), companion_rows, own_rows_ahead};
          std::vector<float> dots(n, std::nanf("")), sum(d, std::nanf(""));
          cpu::DotRows(x.data(), rows.data(), stride, n, d, dots.data(), prefetch);
          cpu::WeightedRowSum(x.data(), rows.data(), stride, n, d, sum.data(), prefetch);
          ASSERT_EQ(dots, plain_dots) << "n=" << n << " d=" << d << " companion " << companion_rows;
          ASSERT_EQ(sum, plain_sum) << "n=" << n << " d=" << d << " companion " << companion_rows;
        }
      }
    }
  }
}

std::vector<double> SoftmaxInDouble(const std::vector<float>& scores) {
  double largest = -std::numeric_limits<double>::infinity();
  for (float s : scores) largest = std::max(largest, double{s});
  std::vector<double> out(scores.size());
  double sum = 0.0;
  for (std::size_t i = 0; i < scores.size(); ++i) sum += out[i] = std::exp(scores[i] - largest);
  for (double& value : out) value /= sum;
  return out;
}

TEST(RowProductsTest, SoftmaxMatchesDoubleOverWideRanges) {
  for (int n : kRowCounts) {
    std::vector<float> scores = RandomFloats(n, 29 + n, -40.0f, 40.0f);
    const std::vector<double> want = SoftmaxInDouble(scores);
    const float largest = *std::max_element(scores.begin(), scores.end());
    std::vector<float> got = scores;
    cpu::SoftmaxInPlace(got.data(), n);
    for (int i = 0; i < n; ++i) {
      // s - max is rounded to float (half an ulp of |s - max|), and e^x carries that error
      // times |x| into its relative error; a few ulp more for exp and the normalisation.
      const double relative = 1e-6 + 6e-8 * std::abs(scores[i] - largest);
      ASSERT_NEAR(got[i], want[i], relative * want[i] + 1e-30) << "n=" << n << " i=" << i;
    }
  }
}

TEST(RowProductsTest, SoftmaxGivesExactlyZeroToMinusInfinityAndUnderflow) {
  // 20 entries: the vector body and the scalar tail both see each case.
  std::vector<float> scores(20, 0.0f);
  const float minus_infinity = -std::numeric_limits<float>::infinity();
  for (int i : {1, 6, 17}) scores[i] = minus_infinity;
  for (int i : {3, 18}) scores[i] = -500.0f;  // e^-500 is 0 in float
  cpu::SoftmaxInPlace(scores.data(), 20);
  const float live = 1.0f / 15.0f;
  for (int i = 0; i < 20; ++i) {
    const bool dead = i == 1 || i == 6 || i == 17 || i == 3 || i == 18;
    if (dead) {
      EXPECT_EQ(scores[i], 0.0f) << i;
    } else {
      EXPECT_NEAR(scores[i], live, 1e-7f) << i;
    }
  }
}

TEST(RowProductsTest, SoftmaxPropagatesNaNAsStdExpDoes) {
  for (int position : {2, 18}) {  // in the vector body and in the scalar tail
    std::vector<float> scores = RandomFloats(20, 41 + position);
    scores[position] = std::nanf("");
    cpu::SoftmaxInPlace(scores.data(), 20);
    for (int i = 0; i < 20; ++i) EXPECT_TRUE(std::isnan(scores[i])) << position << " " << i;
  }
}

}  // namespace
}  // namespace slotserve::kernels::testing
