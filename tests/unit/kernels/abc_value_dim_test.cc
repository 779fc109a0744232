// ABC's learned-control op as flash-linear-attention's ABC layer uses it (docs/FLA_CHECKPOINTS.md
// §3.2): a value width dv other than the key width dk, and memory logits clamped to
// [logit_min, logit_max]. Optimised backends against the reference; on every backend prefill in
// one call == in chunks == token by token, scattered-slot step batches == single steps, the state
// layout K~ [M x dk], V~ [M x dv], z, m, the clamp against logits clamped on the host, and a
// known answer (M = 1). Inputs are packed per token as [q | k | v | logits | NaN padding], so a
// kernel reading past its columns shows up; output padding holds a sentinel that must survive.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/abc_attention.h"
#include "tests/unit/kernels/device_array.h"
#include "tests/unit/kernels/test_backends.h"
#include "tests/unit/kernels/test_data.h"

namespace slotserve::kernels::testing {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kSentinel = -12345.0f;
// This layer's state starts this many floats into each arena slot, as if a layer came before it.
constexpr int64_t kLayerOffset = 4;

static_assert(AbcStateFloatsPerHead(16, 32, 5) == 5 * 16 + 5 * 32 + 2 * 5);
static_assert(AbcStateFloatsPerHead(8, 4, 7) == 7 * 8 + 7 * 4 + 2 * 7);
static_assert(AbcStateFloatsPerHead(8, 5) == AbcStateFloatsPerHead(8, 8, 5));

struct AbcShape {
  std::string name;
  int heads, key_dim, value_dim, memory_rows;
  float logit_min = -kInf, logit_max = kInf;

  int64_t k_col() const { return static_cast<int64_t>(heads) * key_dim; }
  int64_t v_col() const { return 2 * k_col(); }
  int64_t logit_col() const { return v_col() + static_cast<int64_t>(heads) * value_dim; }
  int64_t in_stride() const { return logit_col() + heads * memory_rows + 3; }
  int64_t out_width() const { return static_cast<int64_t>(heads) * value_dim; }
  int64_t out_stride() const { return out_width() + 2; }
  int64_t layer_floats() const {
    return AbcStateFloatsPerLayer(heads, key_dim, value_dim, memory_rows);
  }
  AbcShape Unclamped() const {
    AbcShape s = *this;
    s.logit_min = -kInf;
    s.logit_max = kInf;
    return s;
  }
};

// dk != dv both ways, odd M (M = 1 too), widths around the CUDA kernel's 128/256 threads (where
// its column reduction changes strategy), and clamped shapes.
std::vector<AbcShape> Shapes() {
  return {
      {"dk16_dv32", 3, 16, 32, 5},
      {"dk8_dv4", 2, 8, 4, 7},
      {"dk33_dv7_m1", 2, 33, 7, 1},
      {"dk12_dv130", 2, 12, 130, 3},
      {"dk12_dv300", 1, 12, 300, 3},
      {"dk6_dv6", 2, 6, 6, 4},
      {"dk16_dv8_clamped", 3, 16, 8, 9, -1.0f, 1.5f},
      {"dk4_dv20_clamped", 2, 4, 20, 3, -0.5f, kInf},
  };
}

// Host inputs for `rows` tokens: q, k, v in [-1, 1), logits in [-3, 3) (so the clamped shapes
// do cut some), input padding NaN.
std::vector<float> RandomInputs(const AbcShape& s, int rows, uint32_t seed) {
  std::vector<float> inputs = RandomFloats(rows * s.in_stride(), seed);
  const int64_t logits = s.heads * s.memory_rows;
  for (int r = 0; r < rows; ++r) {
    float* row = inputs.data() + r * s.in_stride();
    for (int64_t c = 0; c < logits; ++c) row[s.logit_col() + c] *= 3.0f;
    for (int64_t c = s.logit_col() + logits; c < s.in_stride(); ++c) {
      row[c] = std::numeric_limits<float>::quiet_NaN();
    }
  }
  return inputs;
}

AbcParams Params(const AbcShape& s, const float* inputs, float* out, int rows) {
  AbcParams p;
  p.rows = rows;
  p.heads = s.heads;
  p.head_dim = s.key_dim;
  p.value_dim = s.value_dim;
  p.memory_rows = s.memory_rows;
  p.q = inputs;
  p.k = inputs + s.k_col();
  p.v = inputs + s.v_col();
  p.memory_logits = inputs + s.logit_col();
  p.in_stride = s.in_stride();
  p.out = out;
  p.out_stride = s.out_stride();
  p.logit_min = s.logit_min;
  p.logit_max = s.logit_max;
  return p;
}

// `slots` request states of one layer in the backend's memory, initially empty (zeros).
class Arena {
 public:
  Arena(Backend backend, const AbcShape& shape, int slots)
      : layer_floats_(shape.layer_floats()),
        slot_stride_(kLayerOffset + layer_floats_ + 1),
        pool_(backend, std::vector<float>(slots * slot_stride_, 0.0f)) {}

  StateView View() const { return {pool_.data(), slot_stride_, kLayerOffset}; }
  std::vector<float> Layer(int slot) const {
    const std::vector<float> all = pool_.Download();
    const auto begin = all.begin() + slot * slot_stride_ + kLayerOffset;
    return std::vector<float>(begin, begin + layer_floats_);
  }

 private:
  int64_t layer_floats_;
  int64_t slot_stride_;
  DeviceArray<float> pool_;
};

std::vector<float> Rows(const AbcShape& s, const std::vector<float>& inputs, int first, int count) {
  return std::vector<float>(inputs.begin() + first * s.in_stride(),
                            inputs.begin() + (first + count) * s.in_stride());
}

// Prefills rows [first, first + count) of `inputs` into `slot`; returns their output rows.
std::vector<float> Prefill(Backend backend, const AbcShape& s, Arena& arena, int slot,
                           const std::vector<float>& inputs, int first, int count) {
  DeviceArray<float> in(backend, Rows(s, inputs, first, count));
  DeviceArray<float> out(backend, std::vector<float>(count * s.out_stride(), kSentinel));
  PrefillTarget target;
  target.state = arena.View();
  target.slot = slot;
  target.start_position = first;
  LaunchAbcPrefill(backend, Params(s, in.data(), out.data(), count), target);
  return out.Download();
}

// One step batch: row i of `rows_inputs` is request slots[i]'s token number positions[i].
std::vector<float> Step(Backend backend, const AbcShape& s, Arena& arena,
                        const std::vector<float>& rows_inputs, const std::vector<int32_t>& slots,
                        const std::vector<int32_t>& positions) {
  const int rows = static_cast<int>(slots.size());
  DeviceArray<float> in(backend, rows_inputs);
  DeviceArray<float> out(backend, std::vector<float>(rows * s.out_stride(), kSentinel));
  DeviceArray<int32_t> slots_dev(backend, slots);
  DeviceArray<int32_t> positions_dev(backend, positions);
  StepTarget target;
  target.state = arena.View();
  target.slots = slots_dev.data();
  target.positions = positions_dev.data();
  LaunchAbcStep(backend, Params(s, in.data(), out.data(), rows), target);
  return out.Download();
}

struct AbcRun {
  std::vector<float> out;    // [rows, out_stride]
  std::vector<float> state;  // the request's layer state afterwards
};

// `rows` tokens into a fresh request (slot 1 of 2), prefilled in chunks of `chunk` tokens.
AbcRun PrefillChunks(Backend backend, const AbcShape& s, const std::vector<float>& inputs, int rows,
                     int chunk) {
  Arena arena(backend, s, 2);
  AbcRun run;
  for (int first = 0; first < rows; first += chunk) {
    const int count = std::min(chunk, rows - first);
    const std::vector<float> part = Prefill(backend, s, arena, 1, inputs, first, count);
    run.out.insert(run.out.end(), part.begin(), part.end());
  }
  run.state = arena.Layer(1);
  return run;
}

// The same tokens as single-row steps.
AbcRun StepByStep(Backend backend, const AbcShape& s, const std::vector<float>& inputs, int rows) {
  Arena arena(backend, s, 2);
  AbcRun run;
  for (int t = 0; t < rows; ++t) {
    const std::vector<float> part = Step(backend, s, arena, Rows(s, inputs, t, 1), {1}, {t});
    run.out.insert(run.out.end(), part.begin(), part.end());
  }
  run.state = arena.Layer(1);
  return run;
}

void ExpectPaddingUntouched(const AbcShape& s, const std::vector<float>& out,
                            const std::string& what) {
  const int64_t rows = static_cast<int64_t>(out.size()) / s.out_stride();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = s.out_width(); c < s.out_stride(); ++c) {
      ASSERT_EQ(out[r * s.out_stride() + c], kSentinel) << what << ": row " << r << " column " << c;
    }
  }
}

// ---------------------------------------------------------------- optimised vs reference

class AbcValueDimVsReferenceTest : public ::testing::TestWithParam<BackendCase> {};

TEST_P(AbcValueDimVsReferenceTest, PrefillMatchesReference) {
  const BackendCase c = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(c.backend);
  constexpr int kRows = 13;
  uint32_t seed = 500;
  for (const AbcShape& s : Shapes()) {
    const std::vector<float> inputs = RandomInputs(s, kRows, ++seed);
    const AbcRun want = PrefillChunks(Backend::kReference, s, inputs, kRows, 5);
    const AbcRun got = PrefillChunks(c.backend, s, inputs, kRows, 5);
    ExpectPaddingUntouched(s, got.out, s.name);
    ExpectAllClose(got.out, want.out, c.tolerance, s.name + " outputs");
    ExpectAllClose(got.state, want.state, c.tolerance, s.name + " state");
    if (HasFailure()) return;
  }
}

TEST_P(AbcValueDimVsReferenceTest, StepMatchesReference) {
  // Three requests at scattered slots with histories of different lengths (one empty), then
  // step batches over all three.
  const BackendCase c = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(c.backend);
  const std::vector<int32_t> slots = {3, 0, 2};
  const std::vector<int> history = {2, 0, 4};
  constexpr int kSteps = 3;
  uint32_t seed = 600;
  for (const AbcShape& s : Shapes()) {
    std::vector<std::vector<float>> histories;
    for (int n : history) histories.push_back(RandomInputs(s, n, ++seed));
    std::vector<std::vector<float>> batches;
    for (int t = 0; t < kSteps; ++t) batches.push_back(RandomInputs(s, 3, ++seed));

    std::vector<std::vector<float>> outputs[2];
    std::vector<float> states[2][3];
    const Backend backends[2] = {Backend::kReference, c.backend};
    for (int b = 0; b < 2; ++b) {
      Arena arena(backends[b], s, 4);
      for (int i = 0; i < 3; ++i) {
        if (history[i] > 0) Prefill(backends[b], s, arena, slots[i], histories[i], 0, history[i]);
      }
      for (int t = 0; t < kSteps; ++t) {
        std::vector<int32_t> positions;
        for (int n : history) positions.push_back(n + t);
        outputs[b].push_back(Step(backends[b], s, arena, batches[t], slots, positions));
      }
      for (int i = 0; i < 3; ++i) states[b][i] = arena.Layer(slots[i]);
    }
    for (int t = 0; t < kSteps; ++t) {
      const std::string what = s.name + " step " + std::to_string(t);
      ExpectPaddingUntouched(s, outputs[1][t], what);
      ExpectAllClose(outputs[1][t], outputs[0][t], c.tolerance, what);
    }
    for (int i = 0; i < 3; ++i) {
      ExpectAllClose(states[1][i], states[0][i], c.tolerance,
                     s.name + " state of slot " + std::to_string(slots[i]));
    }
    if (HasFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, AbcValueDimVsReferenceTest, ::testing::ValuesIn(F32Cases()),
                         [](const auto& info) { return CaseName(info.param); });

// ---------------------------------------------------------------- every backend on its own

class AbcValueDimTest : public ::testing::TestWithParam<Backend> {};

TEST_P(AbcValueDimTest, WholeEqualsChunksEqualsSteps) {
  const Backend backend = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(backend);
  constexpr int kRows = 12;
  const float tolerance = DefaultTolerance(backend);
  uint32_t seed = 700;
  for (const AbcShape& s : Shapes()) {
    const std::vector<float> inputs = RandomInputs(s, kRows, ++seed);
    const AbcRun whole = PrefillChunks(backend, s, inputs, kRows, kRows);
    ExpectPaddingUntouched(s, whole.out, s.name + " whole");
    for (int chunk : {1, 5}) {
      const AbcRun chunks = PrefillChunks(backend, s, inputs, kRows, chunk);
      const std::string what = s.name + " chunks of " + std::to_string(chunk);
      ExpectAllClose(chunks.out, whole.out, tolerance, what + " outputs");
      ExpectAllClose(chunks.state, whole.state, tolerance, what + " state");
    }
    const AbcRun steps = StepByStep(backend, s, inputs, kRows);
    ExpectAllClose(steps.out, whole.out, tolerance, s.name + " steps outputs");
    ExpectAllClose(steps.state, whole.state, tolerance, s.name + " steps state");
    if (HasFailure()) return;
  }
}

TEST_P(AbcValueDimTest, ScatteredSlotBatchesEqualSingleSteps) {
  const Backend backend = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(backend);
  constexpr int kTokens = 6;
  constexpr int kRequests = 3;
  const std::vector<int32_t> slots = {4, 1, 2};  // out of order, with slots 0 and 3 left alone
  uint32_t seed = 800;
  for (const AbcShape& s : Shapes()) {
    std::vector<std::vector<float>> requests;
    for (int i = 0; i < kRequests; ++i) requests.push_back(RandomInputs(s, kTokens, ++seed));

    Arena arena(backend, s, 5);
    std::vector<std::vector<float>> batched(kRequests);
    for (int t = 0; t < kTokens; ++t) {
      std::vector<float> rows;
      for (const auto& request : requests) {
        const std::vector<float> row = Rows(s, request, t, 1);
        rows.insert(rows.end(), row.begin(), row.end());
      }
      const std::vector<float> out =
          Step(backend, s, arena, rows, slots, std::vector<int32_t>(kRequests, t));
      ExpectPaddingUntouched(s, out, s.name + " batch");
      for (int i = 0; i < kRequests; ++i) {
        batched[i].insert(batched[i].end(), out.begin() + i * s.out_stride(),
                          out.begin() + (i + 1) * s.out_stride());
      }
    }
    for (int i = 0; i < kRequests; ++i) {
      const AbcRun alone = StepByStep(backend, s, requests[i], kTokens);
      const std::string what = s.name + " request " + std::to_string(i);
      ExpectAllClose(batched[i], alone.out, DefaultTolerance(backend), what + " outputs");
      ExpectAllClose(arena.Layer(slots[i]), alone.state, DefaultTolerance(backend),
                     what + " state");
    }
    for (int untouched : {0, 3}) {
      const std::vector<float> state = arena.Layer(untouched);
      EXPECT_TRUE(std::all_of(state.begin(), state.end(), [](float x) { return x == 0.0f; }))
          << s.name << " slot " << untouched << " was written";
    }
    if (HasFailure()) return;
  }
}

TEST_P(AbcValueDimTest, FirstTokenStateLayoutIsKeysValuesZMax) {
  // From an empty state every memory row takes the token whole: K~_j = k [dk], V~_j = v [dv],
  // z_j = 1 and m_j = the row's (clamped) logit, in that order per head.
  const Backend backend = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(backend);
  uint32_t seed = 900;
  for (const AbcShape& s : Shapes()) {
    const std::vector<float> inputs = RandomInputs(s, 1, ++seed);
    const AbcRun run = PrefillChunks(backend, s, inputs, 1, 1);
    const int dk = s.key_dim, dv = s.value_dim, m = s.memory_rows;
    const int64_t head_floats = AbcStateFloatsPerHead(dk, dv, m);
    for (int h = 0; h < s.heads; ++h) {
      const float* state = run.state.data() + h * head_floats;
      for (int j = 0; j < m; ++j) {
        for (int i = 0; i < dk; ++i) {
          ASSERT_NEAR(state[j * dk + i], inputs[s.k_col() + h * dk + i], 1e-6)
              << s.name << " K~ head " << h << " row " << j << " column " << i;
        }
        for (int i = 0; i < dv; ++i) {
          ASSERT_NEAR(state[m * dk + j * dv + i], inputs[s.v_col() + h * dv + i], 1e-6)
              << s.name << " V~ head " << h << " row " << j << " column " << i;
        }
        const float logit = inputs[s.logit_col() + h * m + j];
        ASSERT_EQ(state[m * (dk + dv) + j], 1.0f) << s.name << " z head " << h << " row " << j;
        ASSERT_EQ(state[m * (dk + dv) + m + j], std::clamp(logit, s.logit_min, s.logit_max))
            << s.name << " m head " << h << " row " << j;
      }
    }
    // The output is v whatever q is (every memory row holds the same value).
    ExpectAllClose(Columns(run.out, 1, s.out_stride(), s.out_width()),
                   Columns(inputs, 1, s.in_stride(), s.out_width(), s.v_col()), 1e-6f,
                   s.name + " first output");
  }
}

TEST_P(AbcValueDimTest, ClampEqualsLogitsClampedOnTheHost) {
  // Bounds on the params == no bounds on logits clamped beforehand, in prefill and step; and
  // different from no bounds at all, as some logits lie outside.
  const Backend backend = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(backend);
  constexpr int kRows = 10;
  const std::pair<float, float> bounds[] = {{-1.0f, 1.5f}, {-1.0f, kInf}, {-kInf, 1.5f}};
  uint32_t seed = 1000;
  for (const auto& [low, high] : bounds) {
    for (const AbcShape& base : {AbcShape{"dk16_dv8", 3, 16, 8, 9}, AbcShape{"dk8_dv4", 2, 8, 4, 7},
                                 AbcShape{"dk33_dv7_m1", 2, 33, 7, 1}}) {
      AbcShape clamped = base;
      clamped.logit_min = low;
      clamped.logit_max = high;
      const std::string what =
          base.name + " clamp [" + std::to_string(low) + ", " + std::to_string(high) + "]";
      const std::vector<float> inputs = RandomInputs(base, kRows, ++seed);
      std::vector<float> host_clamped = inputs;
      int outside = 0;
      for (int r = 0; r < kRows; ++r) {
        for (int c = 0; c < base.heads * base.memory_rows; ++c) {
          float& logit = host_clamped[r * base.in_stride() + base.logit_col() + c];
          outside += logit < low || logit > high;
          logit = std::clamp(logit, low, high);
        }
      }
      ASSERT_GT(outside, 0) << what;

      const AbcRun want = PrefillChunks(backend, base, host_clamped, kRows, 4);
      const AbcRun got = PrefillChunks(backend, clamped, inputs, kRows, 4);
      ExpectAllClose(got.out, want.out, 1e-6f, what + " prefill outputs");
      ExpectAllClose(got.state, want.state, 1e-6f, what + " prefill state");
      const AbcRun got_steps = StepByStep(backend, clamped, inputs, kRows);
      const AbcRun want_steps = StepByStep(backend, base, host_clamped, kRows);
      ExpectAllClose(got_steps.out, want_steps.out, 1e-6f, what + " step outputs");

      const AbcRun unclamped = PrefillChunks(backend, base, inputs, kRows, 4);
      float difference = 0.0f;
      for (std::size_t i = 0; i < got.out.size(); ++i) {
        difference = std::max(difference, std::abs(got.out[i] - unclamped.out[i]));
      }
      EXPECT_GT(difference, 1e-3f) << what << ": the bounds changed nothing";
      if (HasFailure()) return;
    }
  }
}

TEST_P(AbcValueDimTest, OneMemoryRowIsRunningExpWeightedMeanOfValues) {
  // With M = 1 the softmax over memory rows is 1, so out_t = V̄_t = sum_{j<=t} e^{s_j} v_j /
  // sum_{j<=t} e^{s_j} (s clamped), whatever q and k are. Logits in [-20, 20) exercise the
  // running max.
  const Backend backend = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(backend);
  constexpr int kRows = 9;
  for (const AbcShape& s :
       {AbcShape{"m1", 2, 3, 6, 1}, AbcShape{"m1_clamped", 2, 3, 6, 1, -5.0f, 4.0f}}) {
    std::vector<float> inputs = RandomInputs(s, kRows, 1100);
    for (int r = 0; r < kRows; ++r) {
      for (int h = 0; h < s.heads; ++h) inputs[r * s.in_stride() + s.logit_col() + h] *= 20.0f / 3;
    }
    std::vector<float> want(kRows * s.out_stride(), kSentinel);
    for (int h = 0; h < s.heads; ++h) {
      for (int c = 0; c < s.value_dim; ++c) {
        double numerator = 0.0, denominator = 0.0;
        for (int r = 0; r < kRows; ++r) {
          const float* row = inputs.data() + r * s.in_stride();
          const double weight = std::exp(
              static_cast<double>(std::clamp(row[s.logit_col() + h], s.logit_min, s.logit_max)));
          numerator += weight * row[s.v_col() + h * s.value_dim + c];
          denominator += weight;
          want[r * s.out_stride() + h * s.value_dim + c] =
              static_cast<float>(numerator / denominator);
        }
      }
    }
    const float tolerance = 2 * DefaultTolerance(backend);
    ExpectAllClose(PrefillChunks(backend, s, inputs, kRows, kRows).out, want, tolerance,
                   s.name + " prefill");
    ExpectAllClose(StepByStep(backend, s, inputs, kRows).out, want, tolerance, s.name + " steps");
  }
}

TEST_P(AbcValueDimTest, ZeroValueDimMeansHeadDim) {
  const Backend backend = GetParam();
  SLOTSERVE_SKIP_IF_UNAVAILABLE(backend);
  const AbcShape s{"dk6_dv6", 2, 6, 6, 5};
  const std::vector<float> inputs = RandomInputs(s, 7, 1200);
  DeviceArray<float> in(backend, inputs);
  std::vector<float> outputs[2];
  for (int value_dim : {0, s.key_dim}) {
    Arena arena(backend, s, 1);
    DeviceArray<float> out(backend, std::vector<float>(7 * s.out_stride(), kSentinel));
    AbcParams p = Params(s, in.data(), out.data(), 7);
    p.value_dim = value_dim;
    PrefillTarget target;
    target.state = arena.View();
    LaunchAbcPrefill(backend, p, target);
    outputs[value_dim == 0 ? 0 : 1] = out.Download();
  }
  ExpectAllClose(outputs[0], outputs[1], 0.0f, "value_dim 0 vs value_dim = head_dim");
}

INSTANTIATE_TEST_SUITE_P(Backends, AbcValueDimTest, ::testing::ValuesIn(AllBackends()),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return std::string(BackendName(info.param));
                         });

}  // namespace
}  // namespace slotserve::kernels::testing
