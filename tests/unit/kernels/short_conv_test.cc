// Short convolution: optimised backends against the reference (prefill continuing a window,
// scattered step batches, widths 1 to 4, strides; the whole arena compared, so nothing outside
// the target's window may change); on every backend a whole prefill, a chunked one and
// token-by-token steps agree, and a batched step equals its rows stepped alone; a W = 2 case
// worked by hand.
#include "kernels/short_conv.h"

#include <string>
#include <vector>

#include "base/compute_threads.h"
#include "gtest/gtest.h"
#include "tests/unit/kernels/device_array.h"
#include "tests/unit/kernels/test_backends.h"
#include "tests/unit/kernels/test_data.h"

namespace slotserve::kernels::testing {
namespace {

// The conv's shape and the arena around its window: each slot holds 3 floats of other state,
// the window, then 2 more floats.
struct ConvShape {
  int channels, width;
  int64_t stride() const { return channels + 3; }
  int64_t layer_offset() const { return 3; }
  int64_t slot_stride() const { return ShortConvStateFloats(channels, width) + 5; }
};

struct ConvResult {
  std::vector<float> x, pool;
};

class ConvRun {
 public:
  ConvRun(Backend backend, const ConvShape& shape, const std::vector<float>& x,
          const std::vector<float>& weight, const std::vector<float>& pool)
      : backend_(backend),
        shape_(shape),
        x_(backend, x),
        weight_(backend, weight),
        pool_(backend, pool) {}

  // rows [first_row, first_row + rows) as one prefill of `slot`.
  void Prefill(int slot, int first_row, int rows) {
    const ShortConvParams p = Params(first_row, rows);
    LaunchShortConvPrefill(backend_, p, PrefillTarget{View(), slot, first_row});
  }
  // rows [first_row, first_row + slots.size()) as one step, row i of slot slots[i].
  void Step(const std::vector<int32_t>& slots, int first_row) {
    DeviceArray<int32_t> slots_dev(backend_, slots);
    DeviceArray<int32_t> positions_dev(backend_, std::vector<int32_t>(slots.size(), 9));
    const ShortConvParams p = Params(first_row, static_cast<int>(slots.size()));
    LaunchShortConvStep(backend_, p, StepTarget{View(), slots_dev.data(), positions_dev.data()});
    Synchronize(backend_);  // the slot arrays are freed on return
  }
  ConvResult Result() const { return {x_.Download(), pool_.Download()}; }

 private:
  ShortConvParams Params(int first_row, int rows) const {
    ShortConvParams p;
    p.x = x_.data() + first_row * shape_.stride();
    p.stride = shape_.stride();
    p.rows = rows;
    p.channels = shape_.channels;
    p.width = shape_.width;
    p.weight = weight_.data();
    return p;
  }
  StateView View() const { return {pool_.data(), shape_.slot_stride(), shape_.layer_offset()}; }

  Backend backend_;
  ConvShape shape_;
  DeviceArray<float> x_, weight_, pool_;
};

ConvResult PrefillChunks(Backend backend, const ConvShape& shape, int slot,
                         const std::vector<int>& chunks, const std::vector<float>& x,
                         const std::vector<float>& weight, const std::vector<float>& pool) {
  ConvRun run(backend, shape, x, weight, pool);
  int row = 0;
  for (int chunk : chunks) {
    run.Prefill(slot, row, chunk);
    row += chunk;
  }
  return run.Result();
}

std::string Describe(const ConvShape& shape, int rows) {
  return (::testing::Message() << "channels=" << shape.channels << " width=" << shape.width
                               << " rows=" << rows)
      .GetString();
}

class ShortConvTest : public ::testing::TestWithParam<BackendCase> {};

TEST_P(ShortConvTest, PrefillMatchesReference) {
  const BackendCase c = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(c.backend);
  uint32_t seed = 1000;
  for (int channels : {1, 5, 64, 300}) {
    for (int width : {1, 2, 3, 4}) {
      for (int rows : {1, 2, 7, 40}) {
        const ConvShape shape{channels, width};
        const auto x = RandomFloats(rows * shape.stride(), ++seed, -2.0f, 2.0f);
        const auto weight = RandomFloats(channels * width, ++seed);
        // Random everywhere: slot 2's window is a request's past, the rest must stay as it is.
        const auto pool = RandomFloats(3 * shape.slot_stride(), ++seed);
        const auto want = PrefillChunks(Backend::kReference, shape, 2, {rows}, x, weight, pool);
        const auto got = PrefillChunks(c.backend, shape, 2, {rows}, x, weight, pool);
        ExpectAllClose(got.x, want.x, c.tolerance, "x " + Describe(shape, rows));
        ExpectAllClose(got.pool, want.pool, 0.0f, "pool " + Describe(shape, rows));
        if (HasFailure()) return;
      }
    }
  }
}

TEST_P(ShortConvTest, ScatteredStepMatchesReference) {
  const BackendCase c = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(c.backend);
  uint32_t seed = 1100;
  const std::vector<int32_t> slots = {4, 0, 2};
  for (int channels : {1, 5, 64, 300}) {
    for (int width : {1, 2, 4}) {
      const ConvShape shape{channels, width};
      const auto x = RandomFloats(slots.size() * shape.stride(), ++seed, -2.0f, 2.0f);
      const auto weight = RandomFloats(channels * width, ++seed);
      const auto pool = RandomFloats(5 * shape.slot_stride(), ++seed);
      ConvRun want_run(Backend::kReference, shape, x, weight, pool);
      want_run.Step(slots, 0);
      ConvRun got_run(c.backend, shape, x, weight, pool);
      got_run.Step(slots, 0);
      const ConvResult want = want_run.Result(), got = got_run.Result();
      ExpectAllClose(got.x, want.x, c.tolerance, "x " + Describe(shape, 3));
      ExpectAllClose(got.pool, want.pool, 0.0f, "pool " + Describe(shape, 3));
      if (HasFailure()) return;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ShortConvTest, ::testing::ValuesIn(F32Cases()),
                         [](const auto& info) { return CaseName(info.param); });

TEST(ShortConvThreadsTest, PrefillSplitByChannelsOnThreeThreadsMatchesReference) {
  // Large enough to be split: each thread walks the tokens over its own range of channels (not
  // starting at 0, not a multiple of eight wide) with its own ring of past inputs.
  const ConvShape shape{300, 4};
  const int rows = 40;
  const auto x = RandomFloats(rows * shape.stride(), 1150, -2.0f, 2.0f);
  const auto weight = RandomFloats(shape.channels * shape.width, 1151);
  const auto pool = RandomFloats(2 * shape.slot_stride(), 1152);
  const auto want = PrefillChunks(Backend::kReference, shape, 1, {rows}, x, weight, pool);
  base::SetComputeThreads(3);
  const auto got = PrefillChunks(Backend::kCpu, shape, 1, {rows}, x, weight, pool);
  base::SetComputeThreads(1);
  ExpectAllClose(got.x, want.x, DefaultTolerance(Backend::kCpu), "x");
  EXPECT_EQ(got.pool, want.pool);
}

class ShortConvPropertyTest : public ::testing::TestWithParam<Backend> {};

// The same sums in another grouping (a thread's channel range, a step's order of taps) may
// round differently in the last bit; a wrong continuation is off by far more.
constexpr float kSameMathTolerance = 1e-5f;

TEST_P(ShortConvPropertyTest, WholeEqualsChunksEqualsTokenByToken) {
  SLOTSERVE_SKIP_IF_UNAVAILABLE(GetParam());
  for (int width : {1, 2, 4}) {
    const ConvShape shape{300, width};
    const int rows = 11;
    const auto x = RandomFloats(rows * shape.stride(), 1200 + width, -2.0f, 2.0f);
    const auto weight = RandomFloats(shape.channels * width, 1210 + width);
    const auto pool = RandomFloats(2 * shape.slot_stride(), 1220 + width);
    const auto whole = PrefillChunks(GetParam(), shape, 1, {rows}, x, weight, pool);
    const auto chunked = PrefillChunks(GetParam(), shape, 1, {3, 1, 5, 2}, x, weight, pool);
    ConvRun stepped_run(GetParam(), shape, x, weight, pool);
    for (int r = 0; r < rows; ++r) stepped_run.Step({1}, r);
    const ConvResult stepped = stepped_run.Result();
    const std::string what = Describe(shape, rows);
    ExpectAllClose(chunked.x, whole.x, kSameMathTolerance, "chunked x " + what);
    ExpectAllClose(stepped.x, whole.x, kSameMathTolerance, "stepped x " + what);
    // The window holds raw inputs: copies, exact.
    EXPECT_EQ(chunked.pool, whole.pool) << what;
    EXPECT_EQ(stepped.pool, whole.pool) << what;
    // And the prefill did something: an unchanged x or window would pass the above.
    EXPECT_NE(whole.x, x) << what;
    if (width > 1) {
      EXPECT_NE(whole.pool, pool) << what;
    }
    if (HasFailure()) return;
  }
}

TEST_P(ShortConvPropertyTest, BatchedStepEqualsEachRowAlone) {
  SLOTSERVE_SKIP_IF_UNAVAILABLE(GetParam());
  const ConvShape shape{64, 4};
  const std::vector<int32_t> slots = {2, 0, 3};
  const auto x = RandomFloats(slots.size() * shape.stride(), 1300, -2.0f, 2.0f);
  const auto weight = RandomFloats(shape.channels * shape.width, 1301);
  const auto pool = RandomFloats(4 * shape.slot_stride(), 1302);
  ConvRun batched_run(GetParam(), shape, x, weight, pool);
  batched_run.Step(slots, 0);
  ConvRun alone_run(GetParam(), shape, x, weight, pool);
  for (int r = 2; r >= 0; --r) alone_run.Step({slots[r]}, r);
  const ConvResult batched = batched_run.Result(), alone = alone_run.Result();
  ExpectAllClose(batched.x, alone.x, kSameMathTolerance, "x");
  EXPECT_EQ(batched.pool, alone.pool);
}

TEST_P(ShortConvPropertyTest, WidthTwoByHand) {
  // Two channels, taps c0 (0.5, 1), c1 (-1, 2), a fresh window; inputs [1, 2], [3, 4], then a
  // step with [-2, 1]:
  //   token 0: c0 0.5*0 + 1*1 = 1,      c1 -1*0 + 2*2 = 4
  //   token 1: c0 0.5*1 + 1*3 = 3.5,    c1 -1*2 + 2*4 = 6
  //   token 2: c0 0.5*3 + 1*(-2) = -0.5, c1 -1*4 + 2*1 = -2
  // each through silu; the window ends as the last input.
  SLOTSERVE_SKIP_IF_UNAVAILABLE(GetParam());
  const ConvShape shape{2, 2};  // stride 5, slot_stride 7, window at 3..4 of a slot
  std::vector<float> x(3 * shape.stride(), -9.0f);
  const float inputs[3][2] = {{1, 2}, {3, 4}, {-2, 1}};
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 2; ++c) x[r * shape.stride() + c] = inputs[r][c];
  }
  std::vector<float> pool(2 * shape.slot_stride());
  for (std::size_t i = 0; i < pool.size(); ++i) pool[i] = 100.0f + i;
  pool[7 + 3] = pool[7 + 4] = 0.0f;                             // slot 1's window: fresh
  const std::vector<float> weight = {0.5f, 1.0f, -1.0f, 2.0f};  // [channels, W]
  ConvRun run(GetParam(), shape, x, weight, pool);
  run.Prefill(1, 0, 2);
  const ConvResult after_prefill = run.Result();
  run.Step({1}, 2);
  const ConvResult after_step = run.Result();
  const double want[3][2] = {{0.7310585786300049, 3.928055160151634},
                             {3.3974071923702525, 5.985164261060192},
                             {-0.1887703343990727, -0.2384058440442351}};
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 2; ++c) {
      EXPECT_NEAR(after_step.x[r * shape.stride() + c], want[r][c], 1e-5) << r << "," << c;
    }
    for (int c = 2; c < shape.stride(); ++c) EXPECT_EQ(after_step.x[r * shape.stride() + c], -9.0f);
  }
  std::vector<float> want_pool = pool;
  want_pool[10] = 3.0f;
  want_pool[11] = 4.0f;
  EXPECT_EQ(after_prefill.pool, want_pool);
  want_pool[10] = -2.0f;
  want_pool[11] = 1.0f;
  EXPECT_EQ(after_step.pool, want_pool);
}

INSTANTIATE_TEST_SUITE_P(Backends, ShortConvPropertyTest, ::testing::ValuesIn(AllBackends()),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return std::string(BackendName(info.param));
                         });

}  // namespace
}  // namespace slotserve::kernels::testing
