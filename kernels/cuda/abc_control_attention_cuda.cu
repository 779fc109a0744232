// CUDA ABC controls (docs/ABC_CONTROLS.md; state layout in kernels/abc_control_attention.h).
// One block per (token, head), as the learned kernel:
//   1. threads over the M memory rows: the control's write, as keep[i] and weight[i] so that
//      row i becomes keep * row + weight * k (window: keep 0 and weight 1 on row t mod M;
//      compressive and random: weight on one row; relu/sigmoid/linformer: every row), and z;
//   2. a warp per memory row: K~ updated and its score (K~ q) / sqrt(d), divided by z for the
//      normalising controls, -inf for a row not live;
//   3. softmax over the M scores;
//   4. V~ updated fused with out = sum_i a_i V~_i (column sums).
#include <cmath>

#include "kernels/abc_control_attention.h"
#include "kernels/cuda/recurrent_head.cuh"

namespace slotserve::kernels {
namespace {

using cuda::kWarpSize;

struct ControlShared {
  float* q;        // [d]
  float* k;        // [d]
  float* v;        // [d]
  float* keep;     // [M]
  float* weight;   // [M]
  float* inv_z;    // [M]: 1/z for the normalising controls, 1 otherwise; 0 marks "not live"
  float* score;    // [M], then attention weights (times inv_z)
  float* partial;  // [blockDim]
  float* scratch;  // [32]

  __device__ ControlShared(float* base, int d, int memory_rows) {
    q = base;
    k = q + d;
    v = k + d;
    keep = v + d;
    weight = keep + memory_rows;
    inv_z = weight + memory_rows;
    score = inv_z + memory_rows;
    partial = score + memory_rows;
    scratch = partial + blockDim.x;
  }
};

std::size_t ControlSharedBytes(const AbcControlParams& p, int threads) {
  return sizeof(float) * (3 * p.head_dim + 4 * p.memory_rows + threads + kWarpSize);
}

// Step 1 for memory row i: how it changes (keep, weight) and its new z.
__device__ void ControlRowWrite(const AbcControlParams& p, int64_t in_row, int h, int64_t t, int i,
                                float* z, ControlShared& shared) {
  float keep = 1.0f;
  float weight = 0.0f;
  switch (p.control) {
    case AbcControl::kRelu:
    case AbcControl::kSigmoid: {
      const float s = p.memory_logits[in_row + static_cast<int64_t>(h) * p.memory_rows + i];
      weight = p.control == AbcControl::kRelu ? fmaxf(s, 0.0f) : 1.0f / (1.0f + expf(-s));
      z[i] += weight;
      break;
    }
    case AbcControl::kWindow:
      if (i == static_cast<int>(t % p.memory_rows)) {
        keep = 0.0f;
        weight = 1.0f;
        z[i] = 1.0f;
      }
      break;
    case AbcControl::kLinformer:
      if (t < p.max_positions) {
        weight = p.linformer[(static_cast<int64_t>(h) * p.memory_rows + i) * p.max_positions + t];
        z[i] = 1.0f;
      }
      break;
    case AbcControl::kCompressive:
      if (i == t / p.stride) {
        weight = 1.0f / static_cast<float>(p.stride);
        z[i] += weight;
      }
      break;
    case AbcControl::kRandom:
      if (i == RandomControlRow(p.seed, p.layer, h, t, p.memory_rows)) {
        weight = 1.0f;
        z[i] += 1.0f;
      }
      break;
  }
  shared.keep[i] = keep;
  shared.weight[i] = weight;
  if (AbcControlNormalises(p.control)) {
    shared.inv_z[i] = 1.0f / fmaxf(z[i], 1e-30f);
  } else {
    shared.inv_z[i] = z[i] > 0.0f ? 1.0f : 0.0f;
  }
}

__device__ void ControlHeadToken(const AbcControlParams& p, int row, int64_t t, int h,
                                 float* head_state, ControlShared& shared) {
  const int d = p.head_dim;
  const int memory_rows = p.memory_rows;
  float* key_sum = head_state;                   // K~ [M x d]
  float* value_sum = key_sum + memory_rows * d;  // V~ [M x d]
  float* z = value_sum + memory_rows * d;        // [M]
  const int64_t in_row = static_cast<int64_t>(row) * p.in_stride;
  const bool normalises = AbcControlNormalises(p.control);

  __syncthreads();  // shared inputs of the previous token (prefill) are no longer read
  cuda::LoadScaled(p.q + in_row + h * d, d, 1.0f, shared.q);
  cuda::LoadScaled(p.k + in_row + h * d, d, 1.0f, shared.k);
  cuda::LoadScaled(p.v + in_row + h * d, d, 1.0f, shared.v);
  for (int i = threadIdx.x; i < memory_rows; i += blockDim.x) {
    ControlRowWrite(p, in_row, h, t, i, z, shared);
  }
  __syncthreads();

  const int lane = threadIdx.x % kWarpSize;
  const int warps = blockDim.x / kWarpSize;
  const float score_scale = rsqrtf(static_cast<float>(d));
  for (int i = threadIdx.x / kWarpSize; i < memory_rows; i += warps) {
    const float keep = shared.keep[i];
    const float weight = shared.weight[i];
    const bool changes = keep != 1.0f || weight != 0.0f;
    float* key_row = key_sum + static_cast<int64_t>(i) * d;
    float dot = 0.0f;
    for (int j = lane; j < d; j += kWarpSize) {
      float value = key_row[j];
      if (changes) {
        value = keep * value + weight * shared.k[j];
        key_row[j] = value;
      }
      dot += value * shared.q[j];
    }
    dot = cuda::WarpSum(dot);
    if (lane == 0) {
      const bool live = normalises || shared.inv_z[i] != 0.0f;
      shared.score[i] = live ? dot * shared.inv_z[i] * score_scale : -INFINITY;
    }
  }
  cuda::BlockSoftmax(shared.score, memory_rows, shared.scratch);
  for (int i = threadIdx.x; i < memory_rows; i += blockDim.x) shared.score[i] *= shared.inv_z[i];

  float* out = p.out + static_cast<int64_t>(row) * p.out_stride + h * d;
  cuda::UpdateRowsAndReduceColumns(
      value_sum, memory_rows, d, shared.score,
      [&](int i, int j, float old) {
        return shared.keep[i] * old + shared.weight[i] * shared.v[j];
      },
      [&](int j, float sum) { out[j] = sum; }, shared.partial);
}

struct AbcControlOp {
  using Params = AbcControlParams;
  static constexpr bool kUsesPosition = true;
  __host__ __device__ static int64_t HeadFloats(const Params& p) {
    return AbcStateFloatsPerHead(p.head_dim, p.memory_rows);
  }
  static std::size_t SharedBytes(const Params& p, int threads) {
    return ControlSharedBytes(p, threads);
  }
  __device__ static void Token(const Params& p, int row, int32_t position, int h, float* head_state,
                               float* shared_memory) {
    ControlShared shared(shared_memory, p.head_dim, p.memory_rows);
    ControlHeadToken(p, row, position, h, head_state, shared);
  }
};

}  // namespace

template <>
void LaunchAbcControlPrefill<Backend::kCuda>(const AbcControlParams& p, const PrefillTarget& target,
                                             Stream stream) {
  cuda::LaunchRecurrentPrefill<AbcControlOp>(p, target, stream);
}

template <>
void LaunchAbcControlStep<Backend::kCuda>(const AbcControlParams& p, const StepTarget& target,
                                          Stream stream) {
  cuda::LaunchRecurrentStep<AbcControlOp>(p, target, stream);
}

}  // namespace slotserve::kernels
