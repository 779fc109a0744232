// cpu short convolution. The taps are transposed to [W, channels] so every inner loop runs
// over contiguous channels. A prefill splits the channels (which are independent) between the
// compute threads; each walks the tokens in order keeping its channels' last W-1 inputs in a
// ring of W-1 rows, so the in-place output never feeds a later token and nothing but the window
// is copied. A step splits the rows (independent requests).
#include <cstring>
#include <vector>

#include "kernels/cpu/parallel_for.h"
#include "kernels/cpu/silu_avx2.h"
#include "kernels/reference/host_access.h"
#include "kernels/short_conv.h"

namespace slotserve::kernels {
namespace {

// taps[i * channels + c] = weight[c * W + i].
std::vector<float> TransposedTaps(const ShortConvParams& p) {
  std::vector<float> taps(static_cast<int64_t>(p.width) * p.channels);
  for (int c = 0; c < p.channels; ++c) {
    for (int i = 0; i < p.width; ++i) {
      taps[static_cast<int64_t>(i) * p.channels + c] = p.weight[c * p.width + i];
    }
  }
  return taps;
}

// y = a * b
void Multiply(const float* __restrict a, const float* __restrict b, float* __restrict y, int n) {
  for (int i = 0; i < n; ++i) y[i] = a[i] * b[i];
}

// y += a * b
void MultiplyAdd(const float* __restrict a, const float* __restrict b, float* __restrict y, int n) {
  for (int i = 0; i < n; ++i) y[i] += a[i] * b[i];
}

struct Scratch {
  std::vector<float> ring;  // [W-1, n]
  std::vector<float> sum;   // [n]
};

// Convolves channels [c0, c1) of rows [first_row, first_row + count) of x in place, continuing
// `window` ([W-1, channels], oldest first) and leaving in it the last W-1 inputs.
void ConvolveChannels(const ShortConvParams& p, const float* taps, int first_row, int count,
                      float* window, int c0, int c1, Scratch& scratch) {
  const int n = c1 - c0;
  const int history = p.width - 1;
  const int64_t channels = p.channels;
  // Token s (s < 0: the window's row s + W-1) lives in ring row s mod (W-1).
  scratch.ring.resize(static_cast<std::size_t>(history) * n);
  scratch.sum.resize(n);
  float* ring = scratch.ring.data();
  float* sum = scratch.sum.data();
  for (int j = 0; j < history; ++j) {
    std::memcpy(ring + j * n, window + j * channels + c0, n * sizeof(float));
  }
  const float* current_tap = taps + history * channels + c0;
  for (int t = 0; t < count; ++t) {
    float* x = p.x + (first_row + t) * p.stride + c0;
    Multiply(current_tap, x, sum, n);
    // Tap i multiplies token t - (W-1) + i, in ring row (t + i) mod (W-1).
    for (int i = 0; i < history; ++i) {
      MultiplyAdd(taps + i * channels + c0, ring + ((t + i) % history) * n, sum, n);
    }
    // Token t's input replaces token t - (W-1), whose last use was tap 0 just above.
    if (history > 0) std::memcpy(ring + (t % history) * n, x, n * sizeof(float));
    cpu::SiluArray(sum, x, n);
  }
  for (int j = 0; j < history; ++j) {
    std::memcpy(window + j * channels + c0, ring + ((count + j) % history) * n, n * sizeof(float));
  }
}

// W multiply-adds and a silu (about twenty) per value.
int64_t Work(const ShortConvParams& p) {
  return static_cast<int64_t>(p.rows) * p.channels * (p.width + 20);
}

}  // namespace

template <>
void LaunchShortConvPrefill<Backend::kCpu>(const ShortConvParams& p, const PrefillTarget& target,
                                           Stream /*stream*/) {
  if (p.rows == 0) return;
  const std::vector<float> taps = TransposedTaps(p);
  float* window = host::LayerState(target.state, target.slot);
  // Sixteen channels per grain: threads never share a cache line of x or of the window.
  cpu::ParallelFor(
      p.channels, Work(p),
      [&](int c0, int c1) {
        Scratch scratch;
        ConvolveChannels(p, taps.data(), 0, p.rows, window, c0, c1, scratch);
      },
      /*grain=*/16);
}

template <>
void LaunchShortConvStep<Backend::kCpu>(const ShortConvParams& p, const StepTarget& target,
                                        Stream /*stream*/) {
  if (p.rows == 0) return;
  const std::vector<float> taps = TransposedTaps(p);
  cpu::ParallelFor(p.rows, Work(p), [&](int begin, int end) {
    Scratch scratch;
    for (int r = begin; r < end; ++r) {
      ConvolveChannels(p, taps.data(), r, 1, host::LayerState(target.state, target.slots[r]), 0,
                       p.channels, scratch);
    }
  });
}

}  // namespace slotserve::kernels
