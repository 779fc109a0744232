// Drives the four attention kinds through one interface so that the same property tests
// (against the reference, prefill/step consistency, chunking, batching, reset) cover each
// kind and variant. Inputs are packed per token as [q | k | v | extra | padding] with one row
// stride, extra being ABC's memory logits, RFA's gate logits or Luna's pc; outputs are
// [rows, out_stride] with padding that kernels must leave alone.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "kernels/abc_control_attention.h"
#include "kernels/backend.h"
#include "kernels/luna_attention.h"
#include "kernels/recurrent_state.h"
#include "tests/unit/kernels/device_array.h"

namespace slotserve::kernels::testing {

// RFA constants used by every test: phi has norm ~ sqrt(D) * scale, eps clamps rarely.
constexpr float kRfaFeatureScale = 0.5f;
constexpr float kRfaEps = 0.05f;
// Output padding is pre-filled with this; kernels must leave it alone.
constexpr float kOutputSentinel = -12345.0f;

// kAbcControl: ABC with a control other than the learned exp one (abc_control_attention.h).
enum class AttentionKind { kAbc, kRfa, kLuna, kSoftmax, kAbcControl };

// The linformer variants' W has this many columns (positions); every test stays below it.
constexpr int kLinformerPositions = 64;

struct AttentionVariant {
  std::string name;
  AttentionKind kind;
  int heads;
  int head_dim;
  int size;  // ABC memory rows M, RFA features D, Luna length L, softmax max_context
  bool rfa_gate = false;
  bool rfa_interleave = false;
  LunaActivation luna_activation = LunaActivation::kSoftplus;
  bool luna_tie_kv = false;
  AbcControl abc_control = AbcControl::kWindow;
  int abc_stride = 1;  // compressive: size * abc_stride positions, more than any test feeds
  bool softmax_f16_cache = false;
};

// gtest prints parameters with this (names instead of raw bytes).
inline void PrintTo(const AttentionVariant& variant, std::ostream* os) { *os << variant.name; }

// The variants every property test runs over: small odd shapes and the bundled model's shape.
std::vector<AttentionVariant> AllAttentionVariants();

int64_t StateFloatsPerLayer(const AttentionVariant& variant);

// One attention layer of a variant on one backend, with its per-layer constants (RFA
// projection, Luna pq, linformer W) in that backend's memory. Pointers passed in are device
// pointers.
class AttentionLayer {
 public:
  AttentionLayer(const AttentionVariant& variant, Backend backend);

  const AttentionVariant& variant() const { return variant_; }
  Backend backend() const { return backend_; }
  int model_dim() const { return variant_.heads * variant_.head_dim; }
  int64_t in_stride() const;
  int64_t out_stride() const { return model_dim() + 3; }
  // Host inputs for `rows` tokens, deterministic in seed, in this layer's packed layout.
  std::vector<float> RandomInputs(int rows, uint32_t seed) const;

  void Prefill(const float* inputs, int rows, float* out, const PrefillTarget& target) const;
  void Step(const float* inputs, int rows, float* out, const StepTarget& target) const;

 private:
  int ExtraColumns() const;
  template <typename Target>
  void Run(const float* inputs, int rows, float* out, const Target& target) const;

  AttentionVariant variant_;
  Backend backend_;
  DeviceArray<float> constants_;  // RFA projection [H, D, d] or Luna pq [L, H*d]; else empty
};

// A state arena on a backend holding two layers per slot; tests use the second one, so the
// layer offset and the slot stride (with padding) both matter.
class TestArena {
 public:
  TestArena(Backend backend, int num_slots, int64_t floats_per_layer);

  StateView view() const;
  int num_slots() const { return num_slots_; }
  std::vector<float> Contents() const { return memory_.Download(); }
  void SetContents(const std::vector<float>& contents) { memory_.Upload(contents); }
  // The tested layer's state of one slot.
  std::vector<float> LayerState(int slot) const;
  // Zeros the slot's whole block, as the engine does when a request ends.
  void ResetSlot(int slot);
  // Fills the whole arena with random values (what a previous request might have left).
  void FillGarbage(uint32_t seed);

 private:
  int64_t slot_stride() const { return 2 * floats_per_layer_ + 13; }
  int64_t layer_offset() const { return floats_per_layer_ + 5; }

  Backend backend_;
  int num_slots_;
  int64_t floats_per_layer_;
  DeviceArray<float> memory_;
};

// Host-side conveniences: upload inputs, run, download the output buffer.
// Prefills rows [first, first + count) of host `inputs` into `slot` at `start_position`.
std::vector<float> RunPrefill(const AttentionLayer& layer, TestArena& arena,
                              const std::vector<float>& inputs, int first, int count, int slot,
                              int start_position);
// Steps one token for each request: row i of `inputs` goes to slots[i] at positions[i].
std::vector<float> RunStep(const AttentionLayer& layer, TestArena& arena,
                           const std::vector<float>& inputs, const std::vector<int32_t>& slots,
                           const std::vector<int32_t>& positions);

}  // namespace slotserve::kernels::testing
