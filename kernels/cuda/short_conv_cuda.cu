// CUDA short convolution. Prefill: the window and the chunk's inputs are first gathered end to
// end into stream scratch, so the in-place output never feeds a later token; then every
// (token, channel) output is independent, and the new window is copied out of the scratch by
// the same kernel. Step: one thread per (row, channel) owns that channel of its request's
// window (rows name different slots), convolves and shifts it.
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/launch_shape.cuh"
#include "kernels/cuda/stream_scratch.cuh"
#include "kernels/short_conv.h"

namespace slotserve::kernels {
namespace {

__device__ __forceinline__ float Silu(float x) { return x / (1.0f + expf(-x)); }

// inputs[j] = window row j for j < W-1, then x row j - (W-1).
__global__ void GatherInputsKernel(const float* __restrict__ x, int64_t stride, int rows,
                                   int channels, const float* __restrict__ window, int history,
                                   float* __restrict__ inputs) {
  const int64_t count = static_cast<int64_t>(history + rows) * channels;
  for (int64_t index = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; index < count;
       index += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t j = index / channels, c = index % channels;
    inputs[index] = j < history ? window[index] : x[(j - history) * stride + c];
  }
}

// Indices below rows * channels: one output each. The rest: the new window, the last W-1 rows
// of inputs.
__global__ void ConvolveInputsKernel(float* __restrict__ x, int64_t stride, int rows, int channels,
                                     int width, const float* __restrict__ weight,
                                     const float* __restrict__ inputs, float* __restrict__ window) {
  const int history = width - 1;
  const int64_t outputs = static_cast<int64_t>(rows) * channels;
  const int64_t count = outputs + static_cast<int64_t>(history) * channels;
  for (int64_t index = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; index < count;
       index += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (index >= outputs) {
      window[index - outputs] = inputs[index];
      continue;
    }
    const int64_t t = index / channels, c = index % channels;
    const float* taps = weight + c * width;
    float sum = 0.0f;
    for (int i = 0; i < width; ++i) sum += taps[i] * inputs[(t + i) * channels + c];
    x[t * stride + c] = Silu(sum);
  }
}

__global__ void ShortConvStepKernel(float* __restrict__ x, int64_t stride, int rows, int channels,
                                    int width, const float* __restrict__ weight, float* pool,
                                    int64_t slot_stride, int64_t layer_offset,
                                    const int32_t* __restrict__ slots) {
  const int history = width - 1;
  const int64_t count = static_cast<int64_t>(rows) * channels;
  for (int64_t index = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; index < count;
       index += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = index / channels, c = index % channels;
    float* window = pool + slots[r] * slot_stride + layer_offset + c;
    float* target = x + r * stride + c;
    const float* taps = weight + c * width;
    const float input = *target;
    float sum = taps[history] * input;
    for (int i = 0; i < history; ++i) sum += taps[i] * window[i * channels];
    for (int i = 0; i + 1 < history; ++i) window[i * channels] = window[(i + 1) * channels];
    if (history > 0) window[(history - 1) * channels] = input;
    *target = Silu(sum);
  }
}

}  // namespace

template <>
void LaunchShortConvPrefill<Backend::kCuda>(const ShortConvParams& p, const PrefillTarget& target,
                                            Stream stream) {
  if (p.rows == 0 || p.channels == 0) return;
  const cudaStream_t s = cuda::AsCudaStream(stream);
  const int history = p.width - 1;
  float* window = target.state.pool + static_cast<int64_t>(target.slot) * target.state.slot_stride +
                  target.state.layer_offset;
  const int64_t gathered = static_cast<int64_t>(history + p.rows) * p.channels;
  float* inputs = static_cast<float*>(cuda::StreamScratch(s, gathered * sizeof(float)));
  GatherInputsKernel<<<cuda::ElementwiseBlocks(gathered), cuda::kElementwiseThreads, 0, s>>>(
      p.x, p.stride, p.rows, p.channels, window, history, inputs);
  SLOTSERVE_CUDA_CHECK_LAUNCH();
  ConvolveInputsKernel<<<cuda::ElementwiseBlocks(gathered), cuda::kElementwiseThreads, 0, s>>>(
      p.x, p.stride, p.rows, p.channels, p.width, p.weight, inputs, window);
  SLOTSERVE_CUDA_CHECK_LAUNCH();
}

template <>
void LaunchShortConvStep<Backend::kCuda>(const ShortConvParams& p, const StepTarget& target,
                                         Stream stream) {
  if (p.rows == 0 || p.channels == 0) return;
  const int64_t count = static_cast<int64_t>(p.rows) * p.channels;
  ShortConvStepKernel<<<cuda::ElementwiseBlocks(count), cuda::kElementwiseThreads, 0,
                        cuda::AsCudaStream(stream)>>>(
      p.x, p.stride, p.rows, p.channels, p.width, p.weight, target.state.pool,
      target.state.slot_stride, target.state.layer_offset, target.slots);
  SLOTSERVE_CUDA_CHECK_LAUNCH();
}

}  // namespace slotserve::kernels
