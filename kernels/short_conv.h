// fla's ShortConvolution (docs/FLA_CHECKPOINTS.md §3.4): a depthwise causal convolution of
// width W over time, no bias, then silu, per channel:
//   y_t[c] = silu( sum_{i<W} weight[c*W + i] * x_{t-W+1+i}[c] ),  x before the first token = 0.
// The output replaces x in place. The request's last W-1 *inputs* (pre-convolution values) are
// its state: at the layer's offset in its slot, a window [W-1, channels], row-major, oldest
// input first. A window of zeros is a fresh request, so a reset slot needs nothing else.
#pragma once

#include <cstdint>

#include "kernels/backend.h"
#include "kernels/recurrent_state.h"

namespace slotserve::kernels {

struct ShortConvParams {
  float* x = nullptr;  // [rows, stride]; columns [0, channels) replaced by the output
  int64_t stride = 0;
  int rows = 0;
  int channels = 0;
  int width = 0;                  // W >= 1
  const float* weight = nullptr;  // [channels, W] row-major; tap W-1 multiplies the current input
};

constexpr int64_t ShortConvStateFloats(int channels, int width) {
  return int64_t(width - 1) * channels;
}

// `rows` consecutive tokens of one request (target.slot), continuing from its window; leaves
// the window holding the last W-1 inputs of (old window ++ new rows). target.start_position is
// not read: the window alone carries the past.
template <Backend B>
void LaunchShortConvPrefill(const ShortConvParams& params, const PrefillTarget& target,
                            Stream stream);
// One token per row; row r continues the window in slot target.slots[r] (target.positions is
// not read). Rows must name different slots.
template <Backend B>
void LaunchShortConvStep(const ShortConvParams& params, const StepTarget& target, Stream stream);

inline void LaunchShortConvPrefill(Backend backend, const ShortConvParams& params,
                                   const PrefillTarget& target, Stream stream = nullptr) {
  Dispatch(backend, "short_conv_prefill",
           [&](auto tag) { LaunchShortConvPrefill<decltype(tag)::value>(params, target, stream); });
}
inline void LaunchShortConvStep(Backend backend, const ShortConvParams& params,
                                const StepTarget& target, Stream stream = nullptr) {
  Dispatch(backend, "short_conv_step",
           [&](auto tag) { LaunchShortConvStep<decltype(tag)::value>(params, target, stream); });
}

}  // namespace slotserve::kernels
