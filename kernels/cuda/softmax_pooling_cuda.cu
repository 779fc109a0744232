// CUDA softmax pooling (kernels/softmax_pooling.h): one warp per (memory row, head) walks the
// positions with an online softmax, accumulating the pooled key and value in registers.
#include "kernels/cuda/attend_rows.cuh"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/softmax_pooling.h"

namespace slotserve::kernels {
namespace {

constexpr int kPerLane = cuda::kAttendRowsMaxHeadDim / cuda::kWarpSize;

__global__ void SoftmaxPoolingKernel(SoftmaxPoolingParams p) {
  const int j = blockIdx.x;
  const int h = blockIdx.y;
  const int d = p.head_dim;
  const int64_t width = static_cast<int64_t>(p.heads) * d;
  const int lane = threadIdx.x;
  float query[kPerLane];
  float key_acc[kPerLane];
  float value_acc[kPerLane];
#pragma unroll
  for (int c = 0; c < kPerLane; ++c) {
    const int col = lane + c * cuda::kWarpSize;
    query[c] = p.queries != nullptr && col < d ? p.queries[j * width + h * d + col] : 0.0f;
    key_acc[c] = 0.0f;
    value_acc[c] = 0.0f;
  }
  float running_max = -INFINITY;
  float running_sum = 0.0f;
  for (int i = 0; i < p.positions; ++i) {
    const float* key = p.keys + i * p.in_stride + h * d;
    const float* value = p.values + i * p.in_stride + h * d;
    float logit;
    if (p.queries != nullptr) {
      float dot = 0.0f;
#pragma unroll
      for (int c = 0; c < kPerLane; ++c) {
        const int col = lane + c * cuda::kWarpSize;
        if (col < d) dot += query[c] * key[col];
      }
      logit = cuda::WarpSum(dot);
    } else {
      logit = p.logits[i * p.logits_stride + h * p.memory_rows + j];
    }
    const float score = logit * p.logit_scale;
    const float new_max = fmaxf(running_max, score);
    const float correction = expf(running_max - new_max);
    const float weight = expf(score - new_max);
    running_sum = running_sum * correction + weight;
#pragma unroll
    for (int c = 0; c < kPerLane; ++c) {
      const int col = lane + c * cuda::kWarpSize;
      if (col < d) {
        key_acc[c] = key_acc[c] * correction + weight * key[col];
        value_acc[c] = value_acc[c] * correction + weight * value[col];
      }
    }
    running_max = new_max;
  }
#pragma unroll
  for (int c = 0; c < kPerLane; ++c) {
    const int col = lane + c * cuda::kWarpSize;
    if (col < d) {
      p.out_keys[j * width + h * d + col] = key_acc[c] / running_sum;
      p.out_values[j * width + h * d + col] = value_acc[c] / running_sum;
    }
  }
}

}  // namespace

template <>
void LaunchSoftmaxPooling<Backend::kCuda>(const SoftmaxPoolingParams& p, Stream stream) {
  if (p.positions == 0 || p.memory_rows == 0) return;
  cuda::CheckAttendRowsHeadDim("softmax pooling", p.head_dim);
  SoftmaxPoolingKernel<<<dim3(p.memory_rows, p.heads), cuda::kWarpSize, 0,
                         cuda::AsCudaStream(stream)>>>(p);
  SLOTSERVE_CUDA_CHECK_LAUNCH();
}

}  // namespace slotserve::kernels
