// Normed linear (layer norm, linear, activation as one op): every optimised backend against
// the reference's three ops in turn, over the shapes the cuda GEMV fuses (1-2 rows, 16-bit
// weights, rows up to 2,048 wide) and those it leaves to the three ops (3 rows, 2,056 wide,
// F32 weights), with and without bias, accumulate and each activation.
#include "kernels/normed_linear.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/float16.h"
#include "tests/unit/kernels/device_array.h"
#include "tests/unit/kernels/test_backends.h"
#include "tests/unit/kernels/test_data.h"

namespace slotserve::kernels::testing {
namespace {

struct Shape {
  int rows, in_features, out_features;
  bool bias, accumulate;
  std::optional<Activation> activation;
};

uint16_t Encode(float value, DType dtype) {
  return dtype == DType::kF16 ? FloatToHalf(value) : FloatToBFloat16(value);
}

float Decode(uint16_t bits, DType dtype) {
  return dtype == DType::kF16 ? HalfToFloat(bits) : BFloat16ToFloat(bits);
}

struct Inputs {
  std::vector<float> x, gamma, beta, weights, bias, y;
};

Inputs Draw(const Shape& s, DType dtype, uint32_t seed) {
  Inputs in;
  // An offset and a spread unlike the norm's output, so that a missing or wrong norm shows.
  in.x = RandomFloats(static_cast<std::size_t>(s.rows) * s.in_features, ++seed, 1.0f, 4.0f);
  in.gamma = RandomFloats(s.in_features, ++seed, 0.5f, 1.5f);
  in.beta = RandomFloats(s.in_features, ++seed, -0.5f, 0.5f);
  in.weights = RandomFloats(static_cast<std::size_t>(s.out_features) * s.in_features, ++seed);
  if (dtype != DType::kF32) {
    for (float& w : in.weights) w = Decode(Encode(w, dtype), dtype);  // what the kernel sees
  }
  in.bias = RandomFloats(s.out_features, ++seed);
  in.y = RandomFloats(static_cast<std::size_t>(s.rows) * s.out_features, ++seed);
  if (!s.accumulate) std::fill(in.y.begin(), in.y.end(), std::nanf(""));
  return in;
}

// Runs the op on `backend` (weights stored in `dtype`) and returns y.
std::vector<float> RunNormedLinear(Backend backend, DType dtype, const Shape& s, const Inputs& in) {
  DeviceArray<float> x(backend, in.x);
  DeviceArray<float> gamma(backend, in.gamma);
  DeviceArray<float> beta(backend, in.beta);
  DeviceArray<float> bias(backend, in.bias);
  DeviceArray<float> y(backend, in.y);
  DeviceArray<float> normed(backend, in.x.size());
  DeviceArray<float> weights_f32(backend, dtype == DType::kF32 ? in.weights : std::vector<float>{});
  std::vector<uint16_t> bits;
  if (dtype != DType::kF32) {
    for (float w : in.weights) bits.push_back(Encode(w, dtype));
  }
  DeviceArray<uint16_t> weights_half(backend, bits);
  NormedLinearParams p;
  p.linear.x = x.data();
  p.linear.x_stride = s.in_features;
  p.linear.rows = s.rows;
  p.linear.in_features = s.in_features;
  p.linear.weight = dtype == DType::kF32 ? static_cast<const void*>(weights_f32.data())
                                         : static_cast<const void*>(weights_half.data());
  p.linear.weight_dtype = dtype;
  p.linear.out_features = s.out_features;
  p.linear.bias = s.bias ? bias.data() : nullptr;
  p.linear.y = y.data();
  p.linear.y_stride = s.out_features;
  p.linear.accumulate = s.accumulate;
  p.gamma = gamma.data();
  p.beta = beta.data();
  p.eps = 1e-5f;
  p.normed = normed.data();
  p.activate = s.activation.has_value();
  if (s.activation) p.activation = *s.activation;
  LaunchNormedLinear(backend, p);
  return y.Download();
}

class NormedLinearTest : public ::testing::TestWithParam<BackendCase> {};

TEST_P(NormedLinearTest, MatchesTheReferencesOpsInTurn) {
  const BackendCase c = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(c.backend);
  uint32_t seed = 1;
  std::vector<Shape> shapes;
  for (int rows : {1, 2, 3}) {
    for (int in : {8, 264, 2048, 2056}) {
      for (int out : {1, 9, 40}) shapes.push_back({rows, in, out, true, false, std::nullopt});
    }
    shapes.push_back({rows, 64, 24, false, false, Activation::kGelu});
    shapes.push_back({rows, 64, 24, true, false, Activation::kRelu});
    shapes.push_back({rows, 2048, 17, true, false, Activation::kGelu});
    shapes.push_back({rows, 64, 24, true, true, Activation::kGelu});  // act(x W + b + y)
  }
  for (const Shape& s : shapes) {
    const Inputs in = Draw(s, c.dtype, seed += 10);
    const auto want = RunNormedLinear(Backend::kReference, DType::kF32, s, in);
    const auto got = RunNormedLinear(c.backend, c.dtype, s, in);
    ExpectAllClose(got, want, c.tolerance * (1.0f + s.in_features / 32.0f),
                   (::testing::Message()
                    << "rows=" << s.rows << " in=" << s.in_features << " out=" << s.out_features
                    << " bias=" << s.bias << " accumulate=" << s.accumulate
                    << " activation=" << (s.activation ? static_cast<int>(*s.activation) : -1))
                       .GetString());
  }
}

std::vector<BackendCase> NormedLinearCases() {
  std::vector<BackendCase> cases;
  for (Backend b : OptimisedBackends()) {
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      cases.push_back({b, dtype, DefaultTolerance(b)});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Backends, NormedLinearTest, ::testing::ValuesIn(NormedLinearCases()),
                         [](const auto& info) { return CaseName(info.param); });

}  // namespace
}  // namespace slotserve::kernels::testing
