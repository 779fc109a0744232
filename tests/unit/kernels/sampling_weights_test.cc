// The cpu sampler's vectorised weights (kernels/cpu/sampling_weights.h) against std::exp in
// double, the reference's formula: within 2 ulp over exp's whole normal range, exactly 0 below
// it and for non-finite logits, at every length (the 1-3 left after the groups of four).
#include "kernels/cpu/sampling_weights.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/kernels/test_data.h"

namespace slotserve::kernels::cpu {
namespace {

constexpr double kTwoUlp = 2 * std::numeric_limits<double>::epsilon();

double Expected(float logit, float max_logit, float temperature) {
  return std::exp((static_cast<double>(logit) - max_logit) / temperature);
}

// The weights within 2 ulp of std::exp's (0 where that is below e^-708 or the logit is not
// finite), and the cumulative sums exactly a plain loop's over those weights in id order.
void ExpectWeightsClose(const std::vector<float>& logits, float max_logit, float temperature) {
  std::vector<double> weights(logits.size(), -1.0), cumulative(logits.size(), -1.0);
  SamplingWeightsAndCumulative(logits.data(), static_cast<int>(logits.size()), max_logit,
                               temperature, weights.data(), cumulative.data());
  double running = 0.0;
  for (std::size_t i = 0; i < logits.size(); ++i) {
    running += weights[i];
    ASSERT_EQ(cumulative[i], running) << "i " << i << " of " << logits.size();
  }
  double worst = 0.0;
  for (std::size_t i = 0; i < logits.size(); ++i) {
    const double want = Expected(logits[i], max_logit, temperature);
    if (!std::isfinite(logits[i])) {
      EXPECT_EQ(weights[i], 0.0) << "logit " << logits[i];
    } else if ((static_cast<double>(logits[i]) - max_logit) / temperature < -708.0) {
      EXPECT_EQ(weights[i], 0.0) << "logit " << logits[i] << " is below e^-708";
    } else {
      const double error = std::abs(weights[i] - want) / want;
      worst = std::max(worst, error);
      EXPECT_LE(error, kTwoUlp) << "logit " << logits[i] << " max " << max_logit << " t "
                                << temperature << ": got " << weights[i] << " want " << want;
    }
  }
  std::ostringstream text;
  text << worst;
  ::testing::Test::RecordProperty("worst_relative_error", text.str());
}

TEST(SamplingWeightsTest, WithinTwoUlpOfStdExpOverItsRange) {
  std::vector<float> logits;
  for (float x = -708.0f; x <= 709.0f; x += 0.0137f) logits.push_back(x);
  for (float x : {0.0f, -0.0f, 1e-30f, -1e-30f, -708.0f, 709.0f}) logits.push_back(x);
  ExpectWeightsClose(logits, 0.0f, 1.0f);
}

TEST(SamplingWeightsTest, TheDifferenceAndTheDivisionAreTheReferences) {
  for (float temperature : {0.05f, 0.7f, 1.0f, 3.3f}) {
    const std::vector<float> logits = testing::RandomFloats(4000, 7, -30.0f, 23.5f);
    ExpectWeightsClose(logits, 23.5f, temperature);
  }
}

TEST(SamplingWeightsTest, NonFiniteAndTinyWeighNothingAtEveryLength) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> pattern = {1.0f, -inf, 2.5f, std::nanf(""), inf, -800.0f, 0.25f, -3.0f};
  for (std::size_t n = 0; n <= pattern.size(); ++n) {
    SCOPED_TRACE(::testing::Message() << "n " << n);
    ExpectWeightsClose(std::vector<float>(pattern.begin(), pattern.begin() + n), 2.5f, 1.0f);
  }
}

// Groups of four and the 1-3 after them, with infinities and NaN mixed in, up to a vocabulary.
TEST(SamplingWeightsTest, EveryLengthWithNonFiniteLogitsMixedIn) {
  const float inf = std::numeric_limits<float>::infinity();
  for (int n : {0, 1, 2, 3, 4, 5, 7, 8, 9, 4000, 4003}) {
    SCOPED_TRACE(::testing::Message() << "n " << n);
    std::vector<float> logits = testing::RandomFloats(n, 40 + n, -20.0f, 3.0f);
    for (int i = 1; i < n; i += 7) logits[i] = i % 2 == 0 ? -inf : std::nanf("");
    ExpectWeightsClose(logits, MaxFinite(logits.data(), n), 0.9f);
  }
}

TEST(SamplingWeightsTest, MaxFiniteSkipsInfinitiesAndNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(MaxFinite(nullptr, 0), -inf);
  const std::vector<float> none = {-inf,          inf, std::nanf(""), inf,          -inf,
                                   std::nanf(""), inf, inf,           std::nanf("")};
  EXPECT_EQ(MaxFinite(none.data(), static_cast<int>(none.size())), -inf);
  for (int n = 1; n <= 19; ++n) {
    std::vector<float> x(n, inf);
    for (int i = 0; i < n; ++i) x[i] = i % 3 == 0 ? std::nanf("") : static_cast<float>(i % 7) - 9;
    x[n - 1] = n % 2 == 0 ? inf : x[n - 1];
    float want = -inf;
    for (float v : x) {
      if (std::isfinite(v)) want = std::max(want, v);
    }
    EXPECT_EQ(MaxFinite(x.data(), n), want) << "n " << n;
  }
}

}  // namespace
}  // namespace slotserve::kernels::cpu
