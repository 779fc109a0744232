// ABC with the paper's other memory controls (docs/ABC_CONTROLS.md): every control writes
// keys and values into the same M memory rows and reads them with one softmax over the rows;
// only the control vector phi_t (which rows token t goes into, and with what weight) differs.
// The learned exponential control keeps its own kernel (abc_attention.h), which needs a
// running max; this one serves the rest. The state layout per head is the learned control's,
//   K~ [M x d], V~ [M x d], z [M], m [M]   (m unused here),
// so every control has the same state bytes per request and the same slot, snapshot and fork
// code. z is the row's normaliser for the relu/sigmoid controls, and for the positional
// controls (window, linformer, compressive, random) the weight written into the row so far,
// so "z > 0" is "the row is live" (written at least once) for them.
#pragma once

#include <cstdint>

#include "kernels/abc_attention.h"
#include "kernels/backend.h"
#include "kernels/counter_rng.h"
#include "kernels/recurrent_state.h"

namespace slotserve::kernels {

enum class AbcControl : int32_t {
  kRelu,         // learned: alpha = relu(slot_proj x), rows normalised by z = sum of alpha
  kSigmoid,      // learned: alpha = sigmoid(slot_proj x), likewise
  kWindow,       // token t overwrites row t mod M: the last M tokens (sliding-window softmax)
  kLinformer,    // K~ += W[h, :, t] (x) k_t, W = linformer_proj [H, M, max_positions]
  kCompressive,  // row floor(t / stride) += k_t / stride (mean pooling)
  kRandom,       // row RandomControlRow(seed, layer, head, t) += k_t
};

// True for the controls whose rows are averages (divided by z) rather than sums.
SLOTSERVE_HOST_DEVICE constexpr bool AbcControlNormalises(AbcControl control) {
  return control == AbcControl::kRelu || control == AbcControl::kSigmoid;
}

// The row the random control writes token `position` of head `head` in layer `layer` into:
// splitmix64(seed ^ (layer * 2^32 + head) ^ splitmix64(position)) mod M. Fixed by the model
// directory, so the reference, the CPU and the GPU (and the PyTorch reference) agree.
SLOTSERVE_HOST_DEVICE inline int RandomControlRow(uint64_t seed, int layer, int head,
                                                  int64_t position, int memory_rows) {
  const uint64_t stream = (static_cast<uint64_t>(layer) << 32) + static_cast<uint64_t>(head);
  const uint64_t bits = MixBits(seed ^ stream ^ MixBits(static_cast<uint64_t>(position)));
  return static_cast<int>(bits % static_cast<uint64_t>(memory_rows));
}

struct AbcControlParams {
  int rows = 0;
  int heads = 0;
  int head_dim = 0;
  int memory_rows = 0;  // M
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  int64_t in_stride = 0;
  float* out = nullptr;
  int64_t out_stride = 0;

  AbcControl control = AbcControl::kWindow;
  // relu / sigmoid: s_t = slot_proj(x_t), [h*M, (h+1)*M) of each input row (in_stride apart).
  const float* memory_logits = nullptr;
  // linformer: W [heads, M, max_positions] in the backend's memory.
  const float* linformer = nullptr;
  int max_positions = 0;
  int stride = 1;     // compressive
  uint64_t seed = 0;  // random
  int layer = 0;      // random: the layer's index in the model
};

inline int64_t AbcControlStateFloatsPerLayer(int heads, int head_dim, int memory_rows) {
  return AbcStateFloatsPerLayer(heads, head_dim, memory_rows);
}

template <Backend B>
void LaunchAbcControlPrefill(const AbcControlParams& params, const PrefillTarget& target,
                             Stream stream);
template <Backend B>
void LaunchAbcControlStep(const AbcControlParams& params, const StepTarget& target, Stream stream);

inline void LaunchAbcControlPrefill(Backend backend, const AbcControlParams& params,
                                    const PrefillTarget& target, Stream stream = nullptr) {
  Dispatch(backend, "abc_control_prefill", [&](auto tag) {
    LaunchAbcControlPrefill<decltype(tag)::value>(params, target, stream);
  });
}
inline void LaunchAbcControlStep(Backend backend, const AbcControlParams& params,
                                 const StepTarget& target, Stream stream = nullptr) {
  Dispatch(backend, "abc_control_step",
           [&](auto tag) { LaunchAbcControlStep<decltype(tag)::value>(params, target, stream); });
}

}  // namespace slotserve::kernels
