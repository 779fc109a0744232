// Reference short convolution: the request's window and its new inputs laid end to end (so the
// in-place output never feeds a later token), every sum and the silu in double.
#include <cmath>
#include <vector>

#include "kernels/reference/host_access.h"
#include "kernels/short_conv.h"

namespace slotserve::kernels {
namespace {

// Convolves `count` consecutive rows of x starting at `first_row`, continuing `window`
// ([W-1, channels], oldest first), and leaves in it the last W-1 inputs.
void ConvolveRows(const ShortConvParams& p, int first_row, int count, float* window) {
  const int64_t channels = p.channels;
  const int history = p.width - 1;
  // inputs[j] for j < history is the window, then the new rows' original values.
  std::vector<double> inputs((history + count) * channels);
  for (int64_t k = 0; k < history * channels; ++k) inputs[k] = window[k];
  for (int t = 0; t < count; ++t) {
    const float* x = p.x + (first_row + t) * p.stride;
    for (int c = 0; c < channels; ++c) inputs[(history + t) * channels + c] = x[c];
  }
  for (int t = 0; t < count; ++t) {
    float* y = p.x + (first_row + t) * p.stride;
    for (int c = 0; c < channels; ++c) {
      double sum = 0.0;
      // Tap i multiplies the input W-1-i tokens back: inputs row t + i.
      for (int i = 0; i < p.width; ++i)
        sum += p.weight[c * p.width + i] * inputs[(t + i) * channels + c];
      y[c] = static_cast<float>(sum / (1.0 + std::exp(-sum)));
    }
  }
  for (int64_t k = 0; k < history * channels; ++k) {
    window[k] = static_cast<float>(inputs[count * channels + k]);
  }
}

}  // namespace

template <>
void LaunchShortConvPrefill<Backend::kReference>(const ShortConvParams& p,
                                                 const PrefillTarget& target, Stream /*stream*/) {
  if (p.rows == 0) return;
  ConvolveRows(p, 0, p.rows, host::LayerState(target.state, target.slot));
}

template <>
void LaunchShortConvStep<Backend::kReference>(const ShortConvParams& p, const StepTarget& target,
                                              Stream /*stream*/) {
  for (int r = 0; r < p.rows; ++r) {
    ConvolveRows(p, r, 1, host::LayerState(target.state, target.slots[r]));
  }
}

}  // namespace slotserve::kernels
