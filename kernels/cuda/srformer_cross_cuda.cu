// CUDA SRformer cross attention (kernels/srformer_cross.h). Build: a block per head writes its
// columns of K and V, KᵀV (a thread per element) and ‖K‖_F. Step: one warp per (request,
// head); on a segment change it forms P in R's place, then row by row turns P's row into
// x = P Wᵀ + b and updates mem and R (the whole row is read before it is overwritten), then
// attends to the segment and adds qᵀR / ‖K‖_F.
#include "kernels/cuda/attend_rows.cuh"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/reductions.cuh"
#include "kernels/srformer_cross.h"

namespace slotserve::kernels {
namespace {

constexpr int kBuildThreads = 128;

__global__ void SrformerBuildKernel(SrformerBuildParams p) {
  const SrformerLayout& l = p.layout;
  const int h = blockIdx.x;
  const int d = l.head_dim;
  const int64_t width = l.width();
  float* keys = p.layer + l.keys();
  float* values = p.layer + l.values();
  // Rows past k are zeroed, as the host backends do, so a block's contents never depend on
  // what it held before.
  for (int64_t e = threadIdx.x; e < static_cast<int64_t>(l.capacity) * d; e += blockDim.x) {
    const int64_t i = e / d;
    const int64_t c = h * d + e % d;
    const bool in_use = i < p.positions;
    keys[i * width + c] = in_use ? p.keys[i * p.in_stride + c] : 0.0f;
    values[i * width + c] = in_use ? p.values[i * p.in_stride + c] : 0.0f;
  }
  __syncthreads();
  float* key_value = p.layer + l.key_value() + static_cast<int64_t>(h) * d * d;
  for (int e = threadIdx.x; e < d * d; e += blockDim.x) {
    const int a = e / d;
    const int b = e % d;
    float sum = 0.0f;
    for (int i = 0; i < p.positions; ++i)
      sum += keys[i * width + h * d + a] * values[i * width + h * d + b];
    key_value[e] = sum;
  }
  __shared__ float scratch[kBuildThreads / cuda::kWarpSize];
  float partial = 0.0f;
  for (int64_t e = threadIdx.x; e < static_cast<int64_t>(p.positions) * d; e += blockDim.x) {
    const float key = keys[(e / d) * width + h * d + e % d];
    partial += key * key;
  }
  const float norm = sqrtf(cuda::BlockSum(partial, scratch));
  if (threadIdx.x == 0) p.layer[l.key_norm() + h] = norm;
}

__global__ void SrformerStepKernel(SrformerStepParams p, StepTarget target) {
  const SrformerLayout& l = p.layout;
  const int h = blockIdx.x;
  const int row = blockIdx.y;
  const int lane = threadIdx.x;
  const int d = l.head_dim;
  const int64_t width = l.width();
  const float* block =
      target.state.pool + static_cast<int64_t>(target.slots[row]) * target.state.slot_stride;
  const float* layer = block + target.state.layer_offset;
  float* raf_state = p.raf_state.pool +
                     static_cast<int64_t>(p.raf_slots[row]) * p.raf_state.slot_stride +
                     p.raf_state.layer_offset;
  const int n = static_cast<int>(block[p.length_offset]);
  const int segment = SrformerSegmentOf(target.positions[row], n, p.segment, p.target_length);
  const int first = segment * p.segment;
  const int rows_in_segment = min(first + p.segment, n) - first;
  const float* keys = layer + l.keys() + first * width + h * d;
  const float* values = layer + l.values() + first * width + h * d;
  float* mem = raf_state + l.membrane() + static_cast<int64_t>(h) * d * d;
  float* raf = raf_state + l.raf_output() + static_cast<int64_t>(h) * d * d;
  float* entered = raf_state + l.entered() + h;
  if (*entered != static_cast<float>(segment + 1)) {
    const float* key_value = layer + l.key_value() + static_cast<int64_t>(h) * d * d;
    for (int e = lane; e < d * d; e += cuda::kWarpSize) {
      const int a = e / d;
      const int b = e % d;
      float in_segment = 0.0f;
      for (int i = 0; i < rows_in_segment; ++i)
        in_segment += keys[i * width + a] * values[i * width + b];
      raf[e] = key_value[e] - in_segment;  // P, replaced row by row below
    }
    __syncwarp();
    for (int a = 0; a < d; ++a) {
      float y_part[cuda::kAttendRowsMaxHeadDim / cuda::kWarpSize];
      int k = 0;
      for (int c = lane; c < d; c += cuda::kWarpSize, ++k) {
        float x = p.raf_bias[c];
        for (int b = 0; b < d; ++b) x += p.raf_weight[c * d + b] * raf[a * d + b];
        float membrane = p.leak * mem[a * d + c] + x;
        const float y = membrane / p.threshold - 1.0f;
        if (y > 0) membrane -= p.threshold;
        mem[a * d + c] = membrane;
        y_part[k] = fmaxf(y, 0.0f);
      }
      __syncwarp();  // row a of P is read by every lane before any lane overwrites it
      k = 0;
      for (int c = lane; c < d; c += cuda::kWarpSize, ++k) raf[a * d + c] = y_part[k];
      __syncwarp();
    }
    if (lane == 0) *entered = static_cast<float>(segment + 1);
  }
  const float* q = p.q + row * p.q_stride + h * d;
  float* out = p.out + row * p.out_stride + h * d;
  cuda::WarpAttendRows(q, keys, values, width, rows_in_segment, d, out);
  __syncwarp();
  const float inverse_norm = 1.0f / fmaxf(layer[l.key_norm() + h], 1e-6f);
  for (int c = lane; c < d; c += cuda::kWarpSize) {
    float recurrent = 0.0f;
    for (int a = 0; a < d; ++a) recurrent += q[a] * raf[a * d + c];
    out[c] += recurrent * inverse_norm;
  }
}

}  // namespace

template <>
void LaunchSrformerBuild<Backend::kCuda>(const SrformerBuildParams& p, Stream stream) {
  if (p.positions == 0) return;
  SrformerBuildKernel<<<p.layout.heads, kBuildThreads, 0, cuda::AsCudaStream(stream)>>>(p);
  SLOTSERVE_CUDA_CHECK_LAUNCH();
}

template <>
void LaunchSrformerStep<Backend::kCuda>(const SrformerStepParams& p, const StepTarget& target,
                                        Stream stream) {
  if (p.rows == 0) return;
  cuda::CheckAttendRowsHeadDim("srformer cross attention", p.layout.head_dim);
  SrformerStepKernel<<<dim3(p.layout.heads, p.rows), cuda::kWarpSize, 0,
                       cuda::AsCudaStream(stream)>>>(p, target);
  SLOTSERVE_CUDA_CHECK_LAUNCH();
}

}  // namespace slotserve::kernels
