// GSA (kernels/gsa_attention.h): the optimised backends against the reference over shapes
// (grouped kv heads, dk != dv, odd M, each feature map, padded strides, sentinels around the
// outputs and the state); on every backend, prefill in one call == in chunks == token-by-token
// steps, and a step batch == each request stepped alone; and answers worked out by hand.
#include "kernels/gsa_attention.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "base/compute_threads.h"
#include "gtest/gtest.h"
#include "tests/unit/kernels/device_array.h"
#include "tests/unit/kernels/test_backends.h"
#include "tests/unit/kernels/test_data.h"

namespace slotserve::kernels::testing {
namespace {

constexpr float kOutSentinel = -7.0f;     // output padding columns: must stay as they are
constexpr float kArenaSentinel = 123.0f;  // arena floats outside the layer's state: likewise
constexpr int64_t kLayerOffset = 3;       // the layer's state does not start at its slot's start

struct GsaShape {
  const char* name;
  int heads, kv_heads, dk, dv, m;
  GsaFeatureMap map;
  float normalizer;
};

// One input matrix [rows, in_stride] holds q | k | v | forget logits | 3 padding columns.
struct GsaLayout {
  explicit GsaLayout(const GsaShape& s)
      : shape(s),
        k_col(int64_t{s.heads} * s.dk),
        v_col(k_col + int64_t{s.kv_heads} * s.dk),
        f_col(v_col + int64_t{s.kv_heads} * s.dv),
        in_stride(f_col + int64_t{s.kv_heads} * s.m + 3),
        out_cols(int64_t{s.heads} * s.dv),
        out_stride(out_cols + 2),
        layer_floats(GsaStateFloatsPerLayer(s.kv_heads, s.dk, s.dv, s.m)),
        slot_stride(kLayerOffset + layer_floats + 2) {}
  int rows(const std::vector<float>& inputs) const {
    return static_cast<int>(inputs.size() / in_stride);
  }
  float* q(std::vector<float>& in, int row, int h) const {
    return &in[row * in_stride + h * shape.dk];
  }
  float* k(std::vector<float>& in, int row, int g) const {
    return &in[row * in_stride + k_col + g * shape.dk];
  }
  float* v(std::vector<float>& in, int row, int g) const {
    return &in[row * in_stride + v_col + g * shape.dv];
  }
  float* f(std::vector<float>& in, int row, int g) const {
    return &in[row * in_stride + f_col + g * shape.m];
  }
  // State of kv head g in `slot`: hk [dk x M], then hv [M x dv].
  float* hk(std::vector<float>& pool, int slot, int g) const {
    return &pool[slot * slot_stride + kLayerOffset +
                 g * GsaStateFloatsPerKvHead(shape.dk, shape.dv, shape.m)];
  }
  float* hv(std::vector<float>& pool, int slot, int g) const {
    return hk(pool, slot, g) + shape.dk * shape.m;
  }

  GsaShape shape;
  int64_t k_col, v_col, f_col, in_stride, out_cols, out_stride, layer_floats, slot_stride;
};

std::vector<GsaShape> Shapes() {
  return {
      {"mha_swish", 2, 2, 8, 8, 4, GsaFeatureMap::kSwish, 8.0f},
      {"grouped_relu_dk_ne_dv", 4, 2, 6, 10, 5, GsaFeatureMap::kRelu, 8.0f},
      {"grouped_t2r_odd_m", 4, 2, 8, 5, 7, GsaFeatureMap::kT2r, 4.0f},
      {"one_head_one_slot", 1, 1, 3, 4, 1, GsaFeatureMap::kSwish, 16.0f},
      {"group_of_three_t2r", 3, 1, 16, 12, 33, GsaFeatureMap::kT2r, 8.0f},
      {"wide_grouped_relu", 8, 2, 64, 80, 64, GsaFeatureMap::kRelu, 8.0f},
  };
}

// Random rows: q, k in [-1, 1), v in [-2, 2), forget logits in [-8, 8); padding columns too.
std::vector<float> RandomInputs(const GsaLayout& l, int rows, uint32_t seed) {
  std::vector<float> in = RandomFloats(rows * l.in_stride, seed);
  for (int r = 0; r < rows; ++r) {
    for (int64_t c = l.v_col; c < l.f_col; ++c) in[r * l.in_stride + c] *= 2.0f;
    for (int64_t c = l.f_col; c < l.in_stride; ++c) in[r * l.in_stride + c] *= 8.0f;
  }
  return in;
}

// An arena of `slots` slots, each layer state random (seed != 0) or empty (seed == 0).
std::vector<float> NewArena(const GsaLayout& l, int slots, uint32_t seed) {
  std::vector<float> pool(slots * l.slot_stride, kArenaSentinel);
  const std::vector<float> state = RandomFloats(slots * l.layer_floats, seed);
  for (int s = 0; s < slots; ++s) {
    for (int64_t i = 0; i < l.layer_floats; ++i) {
      pool[s * l.slot_stride + kLayerOffset + i] = seed == 0 ? 0.0f : state[s * l.layer_floats + i];
    }
  }
  return pool;
}

std::vector<float> RowsOf(const GsaLayout& l, const std::vector<float>& in, int first, int count) {
  return {in.begin() + first * l.in_stride, in.begin() + (first + count) * l.in_stride};
}

std::vector<float> T2rWeight(const GsaShape& s, uint32_t seed) {
  return RandomFloats(s.dk * s.dk, seed, -0.5f, 0.5f);
}

// Runs the op on `backend` for the rows of `inputs`: a prefill into `slot` when `slots` is empty,
// else a step of row r into slots[r]. Updates the host copy of the arena; returns the outputs.
std::vector<float> Run(Backend backend, const GsaLayout& l, const std::vector<float>& inputs,
                       const std::vector<float>& t2r, std::vector<float>& pool, int slot,
                       const std::vector<int32_t>& slots = {}) {
  const int rows = l.rows(inputs);
  DeviceArray<float> in(backend, inputs);
  DeviceArray<float> out(backend, std::vector<float>(rows * l.out_stride, kOutSentinel));
  DeviceArray<float> arena(backend, pool);
  // t2r's weight only exists for t2r: the other maps must not read it.
  const bool t2r_map = l.shape.map == GsaFeatureMap::kT2r;
  DeviceArray<float> weight(backend, t2r_map ? t2r : std::vector<float>{0.0f});
  GsaParams p;
  p.rows = rows;
  p.heads = l.shape.heads;
  p.kv_heads = l.shape.kv_heads;
  p.key_dim = l.shape.dk;
  p.value_dim = l.shape.dv;
  p.memory_rows = l.shape.m;
  p.q = in.data();
  p.k = in.data() + l.k_col;
  p.v = in.data() + l.v_col;
  p.forget_logits = in.data() + l.f_col;
  p.in_stride = l.in_stride;
  p.feature_map = l.shape.map;
  p.t2r_weight = t2r_map ? weight.data() : nullptr;
  p.gate_logit_normalizer = l.shape.normalizer;
  p.out = out.data();
  p.out_stride = l.out_stride;
  const StateView view{arena.data(), l.slot_stride, kLayerOffset};
  if (slots.empty()) {
    LaunchGsaPrefill(backend, p, PrefillTarget{view, slot, 0});
  } else {
    DeviceArray<int32_t> slots_dev(backend, slots);
    // GSA has no positions: a null array proves they are not read.
    LaunchGsaStep(backend, p, StepTarget{view, slots_dev.data(), nullptr});
    Synchronize(backend);
  }
  pool = arena.Download();
  return out.Download();
}

std::vector<float> Prefill(Backend backend, const GsaLayout& l, const std::vector<float>& inputs,
                           const std::vector<float>& t2r, std::vector<float>& pool, int slot) {
  return Run(backend, l, inputs, t2r, pool, slot);
}

std::vector<float> Step(Backend backend, const GsaLayout& l, const std::vector<float>& inputs,
                        const std::vector<float>& t2r, std::vector<float>& pool,
                        const std::vector<int32_t>& slots) {
  return Run(backend, l, inputs, t2r, pool, -1, slots);
}

// The output padding columns and the arena outside every layer state hold their sentinels.
void ExpectSentinelsKept(const GsaLayout& l, const std::vector<float>& out,
                         const std::vector<float>& pool, const std::string& what) {
  for (size_t i = 0; i < out.size(); ++i) {
    if (i % l.out_stride >= static_cast<size_t>(l.out_cols)) {
      ASSERT_EQ(out[i], kOutSentinel) << what << ": output padding [" << i << "] written";
    }
  }
  for (size_t i = 0; i < pool.size(); ++i) {
    const int64_t at = static_cast<int64_t>(i % l.slot_stride) - kLayerOffset;
    if (at < 0 || at >= l.layer_floats) {
      ASSERT_EQ(pool[i], kArenaSentinel) << what << ": arena outside the state [" << i << "]";
    }
  }
}

std::string Label(const GsaShape& s, const std::string& what) {
  return std::string(s.name) + " " + what;
}

// ---- Optimised backends against the reference -------------------------------------------------

class GsaAttentionTest : public ::testing::TestWithParam<BackendCase> {};

TEST_P(GsaAttentionTest, PrefillMatchesReference) {
  const BackendCase c = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(c.backend);
  uint32_t seed = 1000;
  for (const GsaShape& shape : Shapes()) {
    const GsaLayout l(shape);
    const std::vector<float> inputs = RandomInputs(l, 7, ++seed);
    const std::vector<float> t2r = T2rWeight(shape, ++seed);
    // Slot 1 of 3 from a random (carried-over) state, and slot 2 from an empty one.
    for (uint32_t state_seed : {++seed, 0u}) {
      std::vector<float> want_pool = NewArena(l, 3, state_seed);
      std::vector<float> got_pool = want_pool;
      const int slot = state_seed == 0 ? 2 : 1;
      const auto want = Prefill(Backend::kReference, l, inputs, t2r, want_pool, slot);
      const auto got = Prefill(c.backend, l, inputs, t2r, got_pool, slot);
      const std::string what = Label(shape, state_seed == 0 ? "from empty" : "from a state");
      ExpectAllClose(got, want, c.tolerance, what + ": outputs");
      ExpectAllClose(got_pool, want_pool, c.tolerance, what + ": state");
      ExpectSentinelsKept(l, got, got_pool, what);
      if (HasFailure()) return;
    }
  }
}

TEST_P(GsaAttentionTest, StepMatchesReference) {
  const BackendCase c = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(c.backend);
  uint32_t seed = 2000;
  for (const GsaShape& shape : Shapes()) {
    const GsaLayout l(shape);
    const std::vector<int32_t> slots = {3, 0, 5, 1};  // slots 2 and 4 are not stepped
    const std::vector<float> inputs = RandomInputs(l, 4, ++seed);
    const std::vector<float> t2r = T2rWeight(shape, ++seed);
    std::vector<float> want_pool = NewArena(l, 6, ++seed);
    std::vector<float> got_pool = want_pool;
    const auto want = Step(Backend::kReference, l, inputs, t2r, want_pool, slots);
    const auto got = Step(c.backend, l, inputs, t2r, got_pool, slots);
    ExpectAllClose(got, want, c.tolerance, Label(shape, "step outputs"));
    ExpectAllClose(got_pool, want_pool, c.tolerance, Label(shape, "step state"));
    ExpectSentinelsKept(l, got, got_pool, Label(shape, "step"));
    if (HasFailure()) return;
  }
}

TEST(GsaAttentionCpuTest, TwoComputeThreadsGiveBitwiseTheResultsOfOne) {
  // Prefill splits kv heads and step (request, kv head) pairs between the compute threads;
  // each unit is computed whole by one thread, so the split changes no bit. The shape is large
  // enough for ParallelFor to split it.
  const GsaLayout l({"threads", 8, 4, 64, 64, 64, GsaFeatureMap::kT2r, 8.0f});
  const std::vector<float> inputs = RandomInputs(l, 6, 6000);
  const std::vector<float> t2r = T2rWeight(l.shape, 6001);
  const std::vector<int32_t> slots = {5, 2, 0, 3, 1, 4};
  std::vector<float> results[2];
  for (int threads : {1, 2}) {
    base::SetComputeThreads(threads);
    std::vector<float> pool = NewArena(l, 6, 6002);
    std::vector<float>& r = results[threads - 1];
    r = Prefill(Backend::kCpu, l, inputs, t2r, pool, 2);
    const auto stepped = Step(Backend::kCpu, l, inputs, t2r, pool, slots);
    r.insert(r.end(), stepped.begin(), stepped.end());
    r.insert(r.end(), pool.begin(), pool.end());
  }
  base::SetComputeThreads(1);
  EXPECT_EQ(results[0], results[1]);
}

INSTANTIATE_TEST_SUITE_P(Backends, GsaAttentionTest, ::testing::ValuesIn(F32Cases()),
                         [](const auto& info) { return CaseName(info.param); });

// ---- Properties every backend has on its own ---------------------------------------------------

class GsaAttentionPropertyTest : public ::testing::TestWithParam<Backend> {};

TEST_P(GsaAttentionPropertyTest, PrefillInChunksAndTokenByTokenStepsMatchOnePrefill) {
  const Backend b = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(b);
  uint32_t seed = 3000;
  for (const GsaShape& shape : Shapes()) {
    const GsaLayout l(shape);
    constexpr int kRows = 9;
    const std::vector<float> inputs = RandomInputs(l, kRows, ++seed);
    const std::vector<float> t2r = T2rWeight(shape, ++seed);
    std::vector<float> whole_pool = NewArena(l, 2, 0);
    const auto whole = Prefill(b, l, inputs, t2r, whole_pool, 1);

    std::vector<float> chunk_pool = NewArena(l, 2, 0);
    std::vector<float> chunked;
    const std::pair<int, int> chunks[] = {{0, 4}, {4, 1}, {5, 4}};  // (first row, rows)
    for (const auto& [first, count] : chunks) {
      const auto part = Prefill(b, l, RowsOf(l, inputs, first, count), t2r, chunk_pool, 1);
      chunked.insert(chunked.end(), part.begin(), part.end());
    }
    std::vector<float> step_pool = NewArena(l, 2, 0);
    std::vector<float> stepped;
    for (int r = 0; r < kRows; ++r) {
      const auto part = Step(b, l, RowsOf(l, inputs, r, 1), t2r, step_pool, {1});
      stepped.insert(stepped.end(), part.begin(), part.end());
    }
    const float tol = DefaultTolerance(b);
    ExpectAllClose(chunked, whole, tol, Label(shape, "chunks 4+1+4 vs whole: outputs"));
    ExpectAllClose(chunk_pool, whole_pool, tol, Label(shape, "chunks 4+1+4 vs whole: state"));
    ExpectAllClose(stepped, whole, tol, Label(shape, "steps vs whole prefill: outputs"));
    ExpectAllClose(step_pool, whole_pool, tol, Label(shape, "steps vs whole prefill: state"));
    ExpectSentinelsKept(l, stepped, step_pool, Label(shape, "steps"));
    if (HasFailure()) return;
  }
}

TEST_P(GsaAttentionPropertyTest, StepBatchOverScatteredSlotsMatchesEachSlotAlone) {
  const Backend b = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(b);
  uint32_t seed = 4000;
  for (const GsaShape& shape : Shapes()) {
    const GsaLayout l(shape);
    const std::vector<int32_t> slots = {4, 0, 2};
    const std::vector<float> inputs = RandomInputs(l, 3, ++seed);
    const std::vector<float> t2r = T2rWeight(shape, ++seed);
    std::vector<float> batch_pool = NewArena(l, 5, ++seed);
    std::vector<float> alone_pool = batch_pool;
    const auto batch = Step(b, l, inputs, t2r, batch_pool, slots);
    std::vector<float> alone;
    for (int r = 0; r < 3; ++r) {
      const auto part = Step(b, l, RowsOf(l, inputs, r, 1), t2r, alone_pool, {slots[r]});
      alone.insert(alone.end(), part.begin(), part.end());
    }
    // The same request's arithmetic whatever else is in the batch: bit for bit.
    ExpectAllClose(batch, alone, 0.0f, Label(shape, "batch vs alone: outputs"));
    ExpectAllClose(batch_pool, alone_pool, 0.0f, Label(shape, "batch vs alone: state"));
    if (HasFailure()) return;
  }
}

// ---- Answers worked out by hand, on every backend ---------------------------------------------

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

TEST_P(GsaAttentionPropertyTest, OneTokenIntoAnEmptySingleSlotStateReturnsSiluOfV) {
  // M = 1: the softmax of one score is 1, so out_h = hv = s silu(v); from an empty state
  // hk = s phi(k) and hv = s silu(v), with s = 1 - exp(logsigmoid(x) / n) = 1 - sigmoid(x)^(1/n).
  const Backend b = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(b);
  const GsaLayout l({"m1", 4, 2, 3, 5, 1, GsaFeatureMap::kSwish, 8.0f});
  std::vector<float> in = RandomInputs(l, 1, 5000);
  std::vector<float> pool = NewArena(l, 1, 0);
  const auto out = Prefill(b, l, in, {}, pool, 0);
  std::vector<float> want_out(l.out_stride, kOutSentinel), want_pool = NewArena(l, 1, 0);
  for (int g = 0; g < 2; ++g) {
    const double s = 1.0 - std::pow(Sigmoid(*l.f(in, 0, g)), 1.0 / 8.0);
    for (int d = 0; d < 3; ++d) {
      const double k = l.k(in, 0, g)[d];
      l.hk(want_pool, 0, g)[d] = static_cast<float>(s * k * Sigmoid(k));
    }
    for (int j = 0; j < 5; ++j) {
      const double v = l.v(in, 0, g)[j];
      const double silu = v * Sigmoid(v);
      l.hv(want_pool, 0, g)[j] = static_cast<float>(s * silu);
      for (int h = 2 * g; h < 2 * g + 2; ++h) want_out[h * 5 + j] = static_cast<float>(s * silu);
    }
  }
  ExpectAllClose(out, want_out, DefaultTolerance(b), "out = s silu(v)");
  ExpectAllClose(pool, want_pool, DefaultTolerance(b), "hk = s phi(k), hv = s silu(v)");
}

TEST_P(GsaAttentionPropertyTest, ClosedForgetGateForgetsEverythingBefore) {
  // A forget logit of -1e4 gives f = -1250, decay = exp(f) = 0 and s = 1: whatever the state
  // held, it becomes hk[:, m] = phi(k), hv[m, :] = silu(v). Every slot then holds the same key,
  // so the softmax is uniform and out_h = silu(v) of the head's group.
  const Backend b = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(b);
  const GsaLayout l({"closed", 4, 2, 6, 7, 5, GsaFeatureMap::kRelu, 8.0f});
  std::vector<float> in = RandomInputs(l, 6, 5100);
  for (int g = 0; g < 2; ++g) {
    for (int m = 0; m < 5; ++m) l.f(in, 5, g)[m] = -1e4f;
  }
  std::vector<float> pool = NewArena(l, 2, 5101);  // the past: a random state, then 5 tokens
  std::vector<float> want_pool = pool;             // slot 0 untouched, slot 1 as worked out below
  const auto out = Prefill(b, l, in, {}, pool, 1);
  const std::vector<float> last(out.end() - l.out_stride, out.end());
  std::vector<float> want_out(l.out_stride, kOutSentinel);
  for (int g = 0; g < 2; ++g) {
    for (int m = 0; m < 5; ++m) {
      for (int d = 0; d < 6; ++d)
        l.hk(want_pool, 1, g)[d * 5 + m] = std::max(0.0f, l.k(in, 5, g)[d]);
      for (int j = 0; j < 7; ++j) {
        const double v = l.v(in, 5, g)[j];
        l.hv(want_pool, 1, g)[m * 7 + j] = static_cast<float>(v * Sigmoid(v));
      }
    }
    for (int h = 2 * g; h < 2 * g + 2; ++h) {
      for (int j = 0; j < 7; ++j) want_out[h * 7 + j] = l.hv(want_pool, 1, g)[j];
    }
  }
  ExpectAllClose(last, want_out, DefaultTolerance(b), "out after a closed gate = silu(v)");
  ExpectAllClose(pool, want_pool, DefaultTolerance(b), "state after a closed gate");
}

TEST_P(GsaAttentionPropertyTest, OpenForgetGateKeepsTheStateAndReadsIt) {
  // A forget logit of +1e4 gives f = 0: decay 1, s = 0, so the state is kept exactly and the
  // token only reads. dk = 2, dv = 1, M = 2, relu; hk = I (slot m holds key e_m), hv = (10, 20);
  // q = (ln 3, -1) -> phi(q) = (ln 3, 0), scores (ln 3, 0), p = (3/4, 1/4), out = 12.5.
  const Backend b = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(b);
  const GsaLayout l({"open", 1, 1, 2, 1, 2, GsaFeatureMap::kRelu, 8.0f});
  std::vector<float> in = RandomInputs(l, 1, 5200);
  l.q(in, 0, 0)[0] = static_cast<float>(std::log(3.0));
  l.q(in, 0, 0)[1] = -1.0f;
  l.f(in, 0, 0)[0] = l.f(in, 0, 0)[1] = 1e4f;
  std::vector<float> pool = NewArena(l, 1, 0);
  const std::vector<float> state = {1, 0, 0, 1, 10, 20};  // hk [2 x 2], hv [2 x 1]
  std::copy(state.begin(), state.end(), l.hk(pool, 0, 0));
  const std::vector<float> before = pool;
  const auto out = Prefill(b, l, in, {}, pool, 0);
  EXPECT_EQ(pool, before) << "an open gate must not touch the state";
  EXPECT_NEAR(out[0], 12.5f, 12.5f * DefaultTolerance(b));
}

TEST_P(GsaAttentionPropertyTest, QueryHeadsOfAGroupReadTheirKvHeadsState) {
  // H = 4 over Hkv = 2: query head h reads kv head h / 2. Each query head's output equals that
  // of an H = Hkv = 2 layer given the same k, v, gates and, as its query head h / 2, query h.
  const Backend b = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(b);
  constexpr int kRows = 5;
  const GsaLayout grouped({"grouped", 4, 2, 4, 6, 3, GsaFeatureMap::kSwish, 8.0f});
  const GsaLayout plain({"plain", 2, 2, 4, 6, 3, GsaFeatureMap::kSwish, 8.0f});
  std::vector<float> in = RandomInputs(grouped, kRows, 5300);
  // Query heads 0 and 1 identical: one group reads one state, so their outputs are equal too.
  for (int r = 0; r < kRows; ++r) std::copy_n(grouped.q(in, r, 0), 4, grouped.q(in, r, 1));
  std::vector<float> grouped_pool = NewArena(grouped, 1, 0);
  const auto out = Prefill(b, grouped, in, {}, grouped_pool, 0);
  for (int sel = 0; sel < 2; ++sel) {  // the first or the second query head of each group
    std::vector<float> plain_in = RandomInputs(plain, kRows, 5301);
    for (int r = 0; r < kRows; ++r) {
      for (int g = 0; g < 2; ++g) {
        std::copy_n(grouped.q(in, r, 2 * g + sel), 4, plain.q(plain_in, r, g));
        std::copy_n(grouped.k(in, r, g), 4, plain.k(plain_in, r, g));
        std::copy_n(grouped.v(in, r, g), 6, plain.v(plain_in, r, g));
        std::copy_n(grouped.f(in, r, g), 3, plain.f(plain_in, r, g));
      }
    }
    std::vector<float> plain_pool = NewArena(plain, 1, 0);
    const auto plain_out = Prefill(b, plain, plain_in, {}, plain_pool, 0);
    std::vector<float> got, want;
    for (int r = 0; r < kRows; ++r) {
      for (int g = 0; g < 2; ++g) {
        const float* o = &out[r * grouped.out_stride + (2 * g + sel) * 6];
        got.insert(got.end(), o, o + 6);
        const float* w = &plain_out[r * plain.out_stride + g * 6];
        want.insert(want.end(), w, w + 6);
      }
    }
    ExpectAllClose(
        got, want, DefaultTolerance(b),
        "query heads " + std::to_string(sel) + ", " + std::to_string(2 + sel) + " vs plain");
    ExpectAllClose(grouped_pool, plain_pool, DefaultTolerance(b), "grouped vs plain state");
  }
  for (int r = 0; r < kRows; ++r) {
    for (int j = 0; j < 6; ++j) {
      EXPECT_EQ(out[r * grouped.out_stride + j], out[r * grouped.out_stride + 6 + j]);
    }
  }
}

TEST_P(GsaAttentionPropertyTest, MatchesTheRecurrenceUnrolledOverTokens) {
  // gsa_mixer.py gsa_chunk's form, in double: with G_t = f_1 + ... + f_t (per slot), token j's
  // write reaches token t >= j scaled by exp(G_t - G_j) s_j and the carried state by exp(G_t):
  //   hk_t[:, m] = exp(G_t) hk_0[:, m] + sum_j exp(G_t - G_j) s_j[m] phi(k_j)   (hv alike).
  const Backend b = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(b);
  constexpr int kRows = 6, kDk = 3, kDv = 4, kM = 5;
  const GsaLayout l({"unrolled", 4, 2, kDk, kDv, kM, GsaFeatureMap::kSwish, 4.0f});
  std::vector<float> in = RandomInputs(l, kRows, 5500);
  std::vector<float> pool = NewArena(l, 1, 5501);
  std::vector<float> want_pool = pool;
  const auto out = Prefill(b, l, in, {}, pool, 0);
  const auto swish = [](double x) { return x * Sigmoid(x); };
  std::vector<float> want_out(kRows * l.out_stride, kOutSentinel);
  for (int g = 0; g < 2; ++g) {
    std::vector<double> cum(kRows * kM), write(kRows * kM);  // G_t[m], s_t[m]
    for (int t = 0; t < kRows; ++t) {
      for (int m = 0; m < kM; ++m) {
        const double f = std::log(Sigmoid(l.f(in, t, g)[m])) / 4.0;
        cum[t * kM + m] = (t > 0 ? cum[(t - 1) * kM + m] : 0.0) + f;
        write[t * kM + m] = 1.0 - std::exp(f);
      }
    }
    // Slot m's key and value at token t, from the initial state and tokens 0..t.
    const auto key = [&](int t, int m, int d) {
      double sum = std::exp(cum[t * kM + m]) * l.hk(want_pool, 0, g)[d * kM + m];
      for (int j = 0; j <= t; ++j) {
        sum += std::exp(cum[t * kM + m] - cum[j * kM + m]) * write[j * kM + m] *
               swish(l.k(in, j, g)[d]);
      }
      return sum;
    };
    const auto value = [&](int t, int m, int i) {
      double sum = std::exp(cum[t * kM + m]) * l.hv(want_pool, 0, g)[m * kDv + i];
      for (int j = 0; j <= t; ++j) {
        sum += std::exp(cum[t * kM + m] - cum[j * kM + m]) * write[j * kM + m] *
               swish(l.v(in, j, g)[i]);
      }
      return sum;
    };
    for (int t = 0; t < kRows; ++t) {
      for (int h = 2 * g; h < 2 * g + 2; ++h) {
        std::vector<double> p(kM);
        double total = 0.0;
        for (int m = 0; m < kM; ++m) {
          double score = 0.0;
          for (int d = 0; d < kDk; ++d) score += swish(l.q(in, t, h)[d]) * key(t, m, d);
          p[m] = std::exp(score);  // scores are small here: no shift needed
          total += p[m];
        }
        for (int i = 0; i < kDv; ++i) {
          double sum = 0.0;
          for (int m = 0; m < kM; ++m) sum += p[m] / total * value(t, m, i);
          want_out[t * l.out_stride + h * kDv + i] = static_cast<float>(sum);
        }
      }
    }
    for (int m = 0; m < kM; ++m) {
      for (int d = 0; d < kDk; ++d) {
        l.hk(want_pool, 0, g)[d * kM + m] = static_cast<float>(key(kRows - 1, m, d));
      }
    }
    for (int m = 0; m < kM; ++m) {
      for (int i = 0; i < kDv; ++i) {
        l.hv(want_pool, 0, g)[m * kDv + i] = static_cast<float>(value(kRows - 1, m, i));
      }
    }
  }
  ExpectAllClose(out, want_out, DefaultTolerance(b), "outputs vs the unrolled sums");
  ExpectAllClose(pool, want_pool, DefaultTolerance(b), "state vs the unrolled sums");
}

TEST_P(GsaAttentionPropertyTest, T2rWithTheIdentityIsRelu) {
  // relu(x I^T) = relu(x).
  const Backend b = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(b);
  const GsaLayout t2r({"t2r", 4, 2, 5, 3, 7, GsaFeatureMap::kT2r, 8.0f});
  const GsaLayout relu({"relu", 4, 2, 5, 3, 7, GsaFeatureMap::kRelu, 8.0f});
  const std::vector<float> in = RandomInputs(t2r, 6, 5400);
  std::vector<float> identity(25, 0.0f);
  for (int i = 0; i < 5; ++i) identity[i * 6] = 1.0f;
  std::vector<float> t2r_pool = NewArena(t2r, 1, 0), relu_pool = NewArena(relu, 1, 0);
  const auto t2r_out = Prefill(b, t2r, in, identity, t2r_pool, 0);
  const auto relu_out = Prefill(b, relu, in, {}, relu_pool, 0);
  ExpectAllClose(t2r_out, relu_out, DefaultTolerance(b), "t2r(I) vs relu: outputs");
  ExpectAllClose(t2r_pool, relu_pool, DefaultTolerance(b), "t2r(I) vs relu: state");
}

INSTANTIATE_TEST_SUITE_P(Backends, GsaAttentionPropertyTest, ::testing::ValuesIn(AllBackends()),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return std::string(BackendName(info.param));
                         });

}  // namespace
}  // namespace slotserve::kernels::testing
