#include "tests/unit/kernels/attention_harness.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "kernels/abc_attention.h"
#include "kernels/rfa_attention.h"
#include "kernels/softmax_attention.h"
#include "tests/unit/kernels/test_data.h"

namespace slotserve::kernels::testing {
namespace {

constexpr uint32_t kConstantsSeed = 4242;

std::vector<float> HostConstants(const AttentionVariant& v) {
  const int64_t model_dim = static_cast<int64_t>(v.heads) * v.head_dim;
  switch (v.kind) {
    case AttentionKind::kRfa:  // W~ entries of a few units: angles spread over several periods
      return RandomFloats(static_cast<std::size_t>(v.heads) * v.size * v.head_dim, kConstantsSeed,
                          -3.0f, 3.0f);
    case AttentionKind::kLuna:  // pq is already divided by sqrt(d)
      return RandomFloats(v.size * model_dim, kConstantsSeed, -0.5f, 0.5f);
    case AttentionKind::kAbcControl:  // linformer's W [H, M, N]: weights of either sign
      if (v.abc_control != AbcControl::kLinformer) return {};
      return RandomFloats(static_cast<std::size_t>(v.heads) * v.size * kLinformerPositions,
                          kConstantsSeed, -1.0f, 1.0f);
    case AttentionKind::kAbc:
    case AttentionKind::kSoftmax:
      return {};
  }
  return {};
}

AttentionVariant ControlVariant(const std::string& name, AbcControl control, int heads,
                                int head_dim, int memory_rows, int stride = 1) {
  AttentionVariant v{name, AttentionKind::kAbcControl, heads, head_dim, memory_rows};
  v.abc_control = control;
  v.abc_stride = stride;
  return v;
}

}  // namespace

std::vector<AttentionVariant> AllAttentionVariants() {
  std::vector<AttentionVariant> variants = {
      {"abc_small", AttentionKind::kAbc, 3, 5, 7},
      {"abc_bundled", AttentionKind::kAbc, 4, 64, 32},
      // d = 45 = 32 + 8 + 5 walks every tail of the vectorised dot product.
      {"abc_odd", AttentionKind::kAbc, 2, 45, 33},
      {"rfa_plain_concat", AttentionKind::kRfa, 3, 5, 6, false, false},
      {"rfa_plain_interleave", AttentionKind::kRfa, 2, 9, 5, false, true},
      {"rfa_gated_concat", AttentionKind::kRfa, 3, 5, 6, true, false},
      {"rfa_gated_interleave", AttentionKind::kRfa, 2, 9, 5, true, true},
      {"rfa_bundled", AttentionKind::kRfa, 4, 64, 32, true, false},
      {"softmax_small", AttentionKind::kSoftmax, 3, 5, 40},
      {"softmax_bundled", AttentionKind::kSoftmax, 4, 64, 40},
      {"softmax_odd", AttentionKind::kSoftmax, 2, 45, 40},
  };
  // The f16 KV cache: d = 45 walks the half rows' scalar tails too.
  for (AttentionVariant v :
       {AttentionVariant{"softmax_f16_small", AttentionKind::kSoftmax, 3, 5, 40},
        AttentionVariant{"softmax_f16_bundled", AttentionKind::kSoftmax, 4, 64, 40},
        AttentionVariant{"softmax_f16_odd", AttentionKind::kSoftmax, 2, 45, 40}}) {
    v.softmax_f16_cache = true;
    variants.push_back(v);
  }
  for (LunaActivation activation : {LunaActivation::kSoftplus, LunaActivation::kElu1}) {
    for (bool tie : {false, true}) {
      AttentionVariant v{"", AttentionKind::kLuna, 3, 5, 4};
      v.luna_activation = activation;
      v.luna_tie_kv = tie;
      v.name = std::string("luna_") +
               (activation == LunaActivation::kSoftplus ? "softplus" : "elu1") +
               (tie ? "_tied" : "_untied");
      variants.push_back(v);
    }
  }
  AttentionVariant luna_bundled{"luna_bundled", AttentionKind::kLuna, 4, 64, 16};
  variants.push_back(luna_bundled);
  // The other ABC controls: the ring wraps (M = 7 < the tests' lengths), compressive rows fill
  // one after the other (stride 4 over 7 rows: 28 positions, more than the tests feed) and
  // random rows repeat.
  variants.push_back(ControlVariant("abc_window_small", AbcControl::kWindow, 3, 5, 7));
  variants.push_back(ControlVariant("abc_window_odd", AbcControl::kWindow, 2, 45, 33));
  variants.push_back(ControlVariant("abc_window_bundled", AbcControl::kWindow, 4, 64, 32));
  variants.push_back(ControlVariant("abc_relu_small", AbcControl::kRelu, 3, 5, 7));
  variants.push_back(ControlVariant("abc_sigmoid_small", AbcControl::kSigmoid, 3, 5, 7));
  variants.push_back(ControlVariant("abc_linformer_small", AbcControl::kLinformer, 3, 5, 7));
  variants.push_back(ControlVariant("abc_compressive_small", AbcControl::kCompressive, 3, 5, 7, 4));
  variants.push_back(ControlVariant("abc_random_small", AbcControl::kRandom, 3, 5, 7));
  variants.push_back(ControlVariant("abc_random_bundled", AbcControl::kRandom, 4, 64, 32));
  return variants;
}

int64_t StateFloatsPerLayer(const AttentionVariant& v) {
  switch (v.kind) {
    case AttentionKind::kAbc:
      return AbcStateFloatsPerLayer(v.heads, v.head_dim, v.size);
    case AttentionKind::kAbcControl:
      return AbcControlStateFloatsPerLayer(v.heads, v.head_dim, v.size);
    case AttentionKind::kRfa:
      return RfaStateFloatsPerLayer(v.heads, v.head_dim, v.size);
    case AttentionKind::kLuna:
      return LunaStateFloatsPerLayer(v.heads, v.head_dim, v.size);
    case AttentionKind::kSoftmax:
      return SoftmaxCacheFloatsPerLayer(v.heads, v.head_dim, v.size, v.softmax_f16_cache);
  }
  return 0;
}

AttentionLayer::AttentionLayer(const AttentionVariant& variant, Backend backend)
    : variant_(variant), backend_(backend), constants_(backend, HostConstants(variant)) {}

int AttentionLayer::ExtraColumns() const {
  switch (variant_.kind) {
    case AttentionKind::kAbc:
      return variant_.heads * variant_.size;  // memory logits
    case AttentionKind::kRfa:
      return variant_.rfa_gate ? variant_.heads : 0;  // gate logits
    case AttentionKind::kLuna:
      return model_dim();  // pc
    case AttentionKind::kSoftmax:
      return 0;
    case AttentionKind::kAbcControl:  // memory logits for the learned relu/sigmoid controls
      return AbcControlNormalises(variant_.abc_control) ? variant_.heads * variant_.size : 0;
  }
  return 0;
}

int64_t AttentionLayer::in_stride() const { return 3LL * model_dim() + ExtraColumns() + 2; }

std::vector<float> AttentionLayer::RandomInputs(int rows, uint32_t seed) const {
  std::vector<float> inputs = RandomFloats(rows * in_stride(), seed, -1.5f, 1.5f);
  if (variant_.kind == AttentionKind::kAbc ||
      variant_.kind == AttentionKind::kAbcControl) {  // memory logits over a wider range
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < ExtraColumns(); ++c) inputs[r * in_stride() + 3 * model_dim() + c] *= 3;
    }
  }
  return inputs;
}

template <typename Target>
void AttentionLayer::Run(const float* inputs, int rows, float* out, const Target& target) const {
  constexpr bool kPrefill = std::is_same_v<Target, PrefillTarget>;
  const AttentionVariant& v = variant_;
  const float* q = inputs;
  const float* k = inputs + model_dim();
  const float* value = inputs + 2 * model_dim();
  const float* extra = inputs + 3 * model_dim();
  switch (v.kind) {
    case AttentionKind::kAbc: {
      AbcParams p;
      p.rows = rows;
      p.heads = v.heads;
      p.head_dim = v.head_dim;
      p.memory_rows = v.size;
      p.q = q;
      p.k = k;
      p.v = value;
      p.memory_logits = extra;
      p.in_stride = in_stride();
      p.out = out;
      p.out_stride = out_stride();
      if constexpr (kPrefill) {
        LaunchAbcPrefill(backend_, p, target);
      } else {
        LaunchAbcStep(backend_, p, target);
      }
      return;
    }
    case AttentionKind::kAbcControl: {
      AbcControlParams p;
      p.rows = rows;
      p.heads = v.heads;
      p.head_dim = v.head_dim;
      p.memory_rows = v.size;
      p.q = q;
      p.k = k;
      p.v = value;
      p.in_stride = in_stride();
      p.out = out;
      p.out_stride = out_stride();
      p.control = v.abc_control;
      if (AbcControlNormalises(v.abc_control)) p.memory_logits = extra;
      p.linformer = constants_.data();
      p.max_positions = kLinformerPositions;
      p.stride = v.abc_stride;
      p.seed = 7;
      p.layer = 1;
      if constexpr (kPrefill) {
        LaunchAbcControlPrefill(backend_, p, target);
      } else {
        LaunchAbcControlStep(backend_, p, target);
      }
      return;
    }
    case AttentionKind::kRfa: {
      RfaParams p;
      p.rows = rows;
      p.heads = v.heads;
      p.head_dim = v.head_dim;
      p.features = v.size;
      p.q = q;
      p.k = k;
      p.v = value;
      p.gate_logits = v.rfa_gate ? extra : nullptr;
      p.in_stride = in_stride();
      p.projection = constants_.data();
      p.feature_scale = kRfaFeatureScale;
      p.eps = kRfaEps;
      p.norm_eps = 1e-3f;
      p.interleave = v.rfa_interleave;
      p.out = out;
      p.out_stride = out_stride();
      if constexpr (kPrefill) {
        LaunchRfaPrefill(backend_, p, target);
      } else {
        LaunchRfaStep(backend_, p, target);
      }
      return;
    }
    case AttentionKind::kLuna: {
      LunaParams p;
      p.rows = rows;
      p.heads = v.heads;
      p.head_dim = v.head_dim;
      p.length = v.size;
      p.q = q;
      p.k = k;
      p.v = v.luna_tie_kv ? k : value;  // tie_kv: the same pointer, as the model passes it
      p.pc = extra;
      p.in_stride = in_stride();
      p.pq = constants_.data();
      p.activation = v.luna_activation;
      p.out = out;
      p.out_stride = out_stride();
      if constexpr (kPrefill) {
        LaunchLunaPrefill(backend_, p, target);
      } else {
        LaunchLunaStep(backend_, p, target);
      }
      return;
    }
    case AttentionKind::kSoftmax: {
      SoftmaxAttentionParams p;
      p.rows = rows;
      p.heads = v.heads;
      p.head_dim = v.head_dim;
      p.max_context = v.size;
      p.f16_cache = v.softmax_f16_cache;
      p.q = q;
      p.k = k;
      p.v = value;
      p.in_stride = in_stride();
      p.out = out;
      p.out_stride = out_stride();
      if constexpr (kPrefill) {
        LaunchSoftmaxAttentionPrefill(backend_, p, target);
      } else {
        LaunchSoftmaxAttentionStep(backend_, p, target);
      }
      return;
    }
  }
}

void AttentionLayer::Prefill(const float* inputs, int rows, float* out,
                             const PrefillTarget& target) const {
  Run(inputs, rows, out, target);
}

void AttentionLayer::Step(const float* inputs, int rows, float* out,
                          const StepTarget& target) const {
  Run(inputs, rows, out, target);
}

TestArena::TestArena(Backend backend, int num_slots, int64_t floats_per_layer)
    : backend_(backend),
      num_slots_(num_slots),
      floats_per_layer_(floats_per_layer),
      memory_(backend, static_cast<std::size_t>(num_slots * slot_stride())) {
  FillZero(backend, memory_.data(), memory_.size() * sizeof(float));
}

StateView TestArena::view() const {
  StateView view;
  view.pool = memory_.data();
  view.slot_stride = slot_stride();
  view.layer_offset = layer_offset();
  return view;
}

std::vector<float> TestArena::LayerState(int slot) const {
  const std::vector<float> all = Contents();
  const auto begin = all.begin() + slot * slot_stride() + layer_offset();
  return std::vector<float>(begin, begin + floats_per_layer_);
}

void TestArena::ResetSlot(int slot) {
  FillZero(backend_, memory_.data() + slot * slot_stride(), slot_stride() * sizeof(float));
}

void TestArena::FillGarbage(uint32_t seed) {
  memory_.Upload(RandomFloats(memory_.size(), seed, -5.0f, 5.0f));
}

std::vector<float> RunPrefill(const AttentionLayer& layer, TestArena& arena,
                              const std::vector<float>& inputs, int first, int count, int slot,
                              int start_position) {
  const int64_t in_stride = layer.in_stride();
  std::vector<float> chunk(inputs.begin() + first * in_stride,
                           inputs.begin() + (first + count) * in_stride);
  // An empty chunk still gets one (unused) row, so no pointer arithmetic happens on null.
  const int allocated_rows = std::max(count, 1);
  chunk.resize(allocated_rows * in_stride, 0.0f);
  DeviceArray<float> inputs_dev(layer.backend(), chunk);
  DeviceArray<float> out_dev(
      layer.backend(), std::vector<float>(allocated_rows * layer.out_stride(), kOutputSentinel));
  PrefillTarget target;
  target.state = arena.view();
  target.slot = slot;
  target.start_position = start_position;
  layer.Prefill(inputs_dev.data(), count, out_dev.data(), target);
  std::vector<float> out = out_dev.Download();
  out.resize(count * layer.out_stride());
  return out;
}

std::vector<float> RunStep(const AttentionLayer& layer, TestArena& arena,
                           const std::vector<float>& inputs, const std::vector<int32_t>& slots,
                           const std::vector<int32_t>& positions) {
  const int rows = static_cast<int>(slots.size());
  DeviceArray<float> inputs_dev(layer.backend(), inputs);
  DeviceArray<int32_t> slots_dev(layer.backend(), slots);
  DeviceArray<int32_t> positions_dev(layer.backend(), positions);
  DeviceArray<float> out_dev(layer.backend(),
                             std::vector<float>(rows * layer.out_stride(), kOutputSentinel));
  StepTarget target;
  target.state = arena.view();
  target.slots = slots_dev.data();
  target.positions = positions_dev.data();
  layer.Step(inputs_dev.data(), rows, out_dev.data(), target);
  return out_dev.Download();
}

}  // namespace slotserve::kernels::testing
