// CUDA causal Luna (docs/MODEL_FORMAT.md "The attention kinds"; state layout in
// kernels/luna_attention.h). One block per (token, head), with t = position + 1:
//   1. a warp per memory row l: p_l = act(pc . pq_l);
//   2. A' = A + k p^T [d x L] fused with the column sums (q/sqrt(d))^T A' / t  -> scores [L];
//   3. softmax over the L scores;
//   4. C' = C + p v^T [L x d] fused with out = a^T C' / t.
// Step: grid (heads, requests) gathering states by slot, t from each request's position.
// Prefill: grid (heads), a scan over the chunk inside the block, t = start_position + row + 1.
#include <cmath>

#include "kernels/cuda/recurrent_head.cuh"
#include "kernels/luna_attention.h"

namespace slotserve::kernels {
namespace {

using cuda::kWarpSize;

struct LunaShared {
  float* q;        // [d], already divided by sqrt(d)
  float* k;        // [d]
  float* v;        // [d]
  float* pc;       // [d]
  float* p;        // [L]
  float* score;    // [L], then attention weights
  float* partial;  // [blockDim]
  float* scratch;  // [32]

  __device__ LunaShared(float* base, int d, int length) {
    q = base;
    k = q + d;
    v = k + d;
    pc = v + d;
    p = pc + d;
    score = p + length;
    partial = score + length;
    scratch = partial + blockDim.x;
  }
};

std::size_t LunaSharedBytes(const LunaParams& p, int threads) {
  return sizeof(float) * (4 * p.head_dim + 2 * p.length + threads + kWarpSize);
}

__device__ float LunaActivate(LunaActivation activation, float u) {
  if (activation == LunaActivation::kElu1) return u > 0.0f ? u + 1.0f : expf(u);
  // (1/beta) log(1 + exp(beta u)) with beta = ln 2, written to not overflow for large u.
  constexpr float kBeta = 0.69314718055994531f;
  const float bu = kBeta * u;
  return (fmaxf(bu, 0.0f) + log1pf(expf(-fabsf(bu)))) / kBeta;
}

__device__ void LunaHeadToken(const LunaParams& p, int row, int32_t position, int h,
                              float* head_state, LunaShared& shared) {
  const int d = p.head_dim;
  const int length = p.length;
  float* a_state = head_state;                                  // A [d x L]
  float* c_state = a_state + static_cast<int64_t>(d) * length;  // C [L x d]
  const int64_t in_row = static_cast<int64_t>(row) * p.in_stride;
  const float inv_t = 1.0f / (static_cast<float>(position) + 1.0f);

  __syncthreads();  // shared inputs of the previous token (prefill) are no longer read
  cuda::LoadScaled(p.q + in_row + h * d, d, rsqrtf(static_cast<float>(d)), shared.q);
  cuda::LoadScaled(p.k + in_row + h * d, d, 1.0f, shared.k);
  cuda::LoadScaled(p.v + in_row + h * d, d, 1.0f, shared.v);
  cuda::LoadScaled(p.pc + in_row + h * d, d, 1.0f, shared.pc);
  __syncthreads();

  const int lane = threadIdx.x % kWarpSize;
  const int warps = blockDim.x / kWarpSize;
  const int64_t pq_stride = static_cast<int64_t>(p.heads) * d;
  for (int l = threadIdx.x / kWarpSize; l < length; l += warps) {
    const float* pq = p.pq + l * pq_stride + h * d;
    float dot = 0.0f;
    for (int i = lane; i < d; i += kWarpSize) dot += shared.pc[i] * pq[i];
    dot = cuda::WarpSum(dot);
    if (lane == 0) shared.p[l] = LunaActivate(p.activation, dot);
  }

  cuda::UpdateRowsAndReduceColumns(
      a_state, d, length, shared.q,
      [&](int i, int l, float old) { return old + shared.k[i] * shared.p[l]; },
      [&](int l, float sum) { shared.score[l] = sum * inv_t; }, shared.partial);
  cuda::BlockSoftmax(shared.score, length, shared.scratch);

  float* out = p.out + static_cast<int64_t>(row) * p.out_stride + h * d;
  cuda::UpdateRowsAndReduceColumns(
      c_state, length, d, shared.score,
      [&](int l, int i, float old) { return old + shared.p[l] * shared.v[i]; },
      [&](int i, float sum) { out[i] = sum * inv_t; }, shared.partial);
}

struct LunaOp {
  using Params = LunaParams;
  static constexpr bool kUsesPosition = true;
  __host__ __device__ static int64_t HeadFloats(const Params& p) {
    return 2LL * p.head_dim * p.length;
  }
  static std::size_t SharedBytes(const Params& p, int threads) {
    return LunaSharedBytes(p, threads);
  }
  __device__ static void Token(const Params& p, int row, int32_t position, int h, float* head_state,
                               float* shared_memory) {
    LunaShared shared(shared_memory, p.head_dim, p.length);
    LunaHeadToken(p, row, position, h, head_state, shared);
  }
};

}  // namespace

template <>
void LaunchLunaPrefill<Backend::kCuda>(const LunaParams& p, const PrefillTarget& target,
                                       Stream stream) {
  cuda::LaunchRecurrentPrefill<LunaOp>(p, target, stream);
}

template <>
void LaunchLunaStep<Backend::kCuda>(const LunaParams& p, const StepTarget& target, Stream stream) {
  cuda::LaunchRecurrentStep<LunaOp>(p, target, stream);
}

}  // namespace slotserve::kernels
