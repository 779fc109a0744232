// CUDA random feature attention (docs/MODEL_FORMAT.md "The attention kinds"; state layout in
// kernels/rfa_attention.h). One block per (token, head):
//   1. block sums give |q| and |k|;
//   2. a warp per random feature f: the angles W~_f.q^ and W~_f.k^, then phi = scale*[sin, cos]
//      in the configured order;
//   3. threads over the 2D feature rows: z' = g z + (1-g) phi(k), and phi(q).z' (block sum);
//   4. S' = g S + (1-g) phi(k) v^T fused with the column sums phi(q)^T S', divided by
//      max(phi(q).z', eps).
// Step: grid (heads, requests) gathering states by slot. Prefill: grid (heads), a scan over
// the chunk's tokens inside the block.
#include <cmath>

#include "kernels/cuda/recurrent_head.cuh"
#include "kernels/rfa_attention.h"

namespace slotserve::kernels {
namespace {

using cuda::kWarpSize;

struct RfaShared {
  float* q;        // [d]
  float* k;        // [d]
  float* v;        // [d]
  float* phi_q;    // [2D]
  float* phi_k;    // [2D]
  float* partial;  // [blockDim]
  float* scratch;  // [32]

  __device__ RfaShared(float* base, int d, int features) {
    q = base;
    k = q + d;
    v = k + d;
    phi_q = v + d;
    phi_k = phi_q + 2 * features;
    partial = phi_k + 2 * features;
    scratch = partial + blockDim.x;
  }
};

std::size_t RfaSharedBytes(const RfaParams& p, int threads) {
  return sizeof(float) * (3 * p.head_dim + 4 * p.features + threads + kWarpSize);
}

__device__ float BlockSquaredNorm(const float* u, int d, float* scratch) {
  float sum = 0.0f;
  for (int i = threadIdx.x; i < d; i += blockDim.x) sum += u[i] * u[i];
  return cuda::BlockSum(sum, scratch);
}

__device__ void RfaHeadToken(const RfaParams& p, int row, int h, float* head_state,
                             RfaShared& shared) {
  const int d = p.head_dim;
  const int features = p.features;
  const int width = 2 * features;
  float* sums = head_state;                           // S [2D x d]
  float* z = sums + static_cast<int64_t>(width) * d;  // [2D]
  const int64_t in_row = static_cast<int64_t>(row) * p.in_stride;

  __syncthreads();  // shared inputs of the previous token (prefill) are no longer read
  cuda::LoadScaled(p.q + in_row + h * d, d, 1.0f, shared.q);
  cuda::LoadScaled(p.k + in_row + h * d, d, 1.0f, shared.k);
  cuda::LoadScaled(p.v + in_row + h * d, d, 1.0f, shared.v);
  __syncthreads();
  const float inv_q = 1.0f / (sqrtf(BlockSquaredNorm(shared.q, d, shared.scratch)) + p.norm_eps);
  const float inv_k = 1.0f / (sqrtf(BlockSquaredNorm(shared.k, d, shared.scratch)) + p.norm_eps);

  const int lane = threadIdx.x % kWarpSize;
  const int warps = blockDim.x / kWarpSize;
  const float* projection = p.projection + static_cast<int64_t>(h) * features * d;
  for (int f = threadIdx.x / kWarpSize; f < features; f += warps) {
    const float* w = projection + static_cast<int64_t>(f) * d;
    float angle_q = 0.0f;
    float angle_k = 0.0f;
    for (int i = lane; i < d; i += kWarpSize) {
      angle_q += w[i] * shared.q[i];
      angle_k += w[i] * shared.k[i];
    }
    angle_q = cuda::WarpSum(angle_q) * inv_q;
    angle_k = cuda::WarpSum(angle_k) * inv_k;
    if (lane == 0) {
      const int sin_index = p.interleave ? 2 * f : f;
      const int cos_index = p.interleave ? 2 * f + 1 : features + f;
      float sine, cosine;
      sincosf(angle_q, &sine, &cosine);
      shared.phi_q[sin_index] = p.feature_scale * sine;
      shared.phi_q[cos_index] = p.feature_scale * cosine;
      sincosf(angle_k, &sine, &cosine);
      shared.phi_k[sin_index] = p.feature_scale * sine;
      shared.phi_k[cos_index] = p.feature_scale * cosine;
    }
  }
  float keep = 1.0f;  // gate=false: plain running sums
  float add = 1.0f;
  if (p.gate_logits != nullptr) {
    keep = 1.0f / (1.0f + expf(-p.gate_logits[in_row + h]));
    add = 1.0f - keep;
  }
  __syncthreads();

  float dot = 0.0f;
  for (int f = threadIdx.x; f < width; f += blockDim.x) {
    const float updated = keep * z[f] + add * shared.phi_k[f];
    z[f] = updated;
    dot += shared.phi_q[f] * updated;
  }
  const float inv_denominator = 1.0f / fmaxf(cuda::BlockSum(dot, shared.scratch), p.eps);

  float* out = p.out + static_cast<int64_t>(row) * p.out_stride + h * d;
  cuda::UpdateRowsAndReduceColumns(
      sums, width, d, shared.phi_q,
      [&](int f, int i, float old) { return keep * old + add * shared.phi_k[f] * shared.v[i]; },
      [&](int i, float sum) { out[i] = sum * inv_denominator; }, shared.partial);
}

struct RfaOp {
  using Params = RfaParams;
  static constexpr bool kUsesPosition = false;
  __host__ __device__ static int64_t HeadFloats(const Params& p) {
    return 2LL * p.features * p.head_dim + 2LL * p.features;
  }
  static std::size_t SharedBytes(const Params& p, int threads) {
    return RfaSharedBytes(p, threads);
  }
  __device__ static void Token(const Params& p, int row, int32_t /*position*/, int h,
                               float* head_state, float* shared_memory) {
    RfaShared shared(shared_memory, p.head_dim, p.features);
    RfaHeadToken(p, row, h, head_state, shared);
  }
};

}  // namespace

template <>
void LaunchRfaPrefill<Backend::kCuda>(const RfaParams& p, const PrefillTarget& target,
                                      Stream stream) {
  cuda::LaunchRecurrentPrefill<RfaOp>(p, target, stream);
}

template <>
void LaunchRfaStep<Backend::kCuda>(const RfaParams& p, const StepTarget& target, Stream stream) {
  cuda::LaunchRecurrentStep<RfaOp>(p, target, stream);
}

}  // namespace slotserve::kernels
