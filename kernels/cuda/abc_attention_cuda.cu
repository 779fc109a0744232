// CUDA ABC (docs/MODEL_FORMAT.md "The attention kinds"; state layout in kernels/abc_attention.h).
// One block per (token, head):
//   1. threads over the M memory rows: new running max, decay c, weight w, z' = c z + w;
//   2. a warp per memory row: K~ = c K~ + w k, and its score (K~ q) / z' / sqrt(dk);
//   3. softmax over the M scores, each divided by z' so that V~ needs no division;
//   4. V~ = c V~ + w v fused with out = sum_i a_i V~_i (column sums).
// Step: grid (heads, requests), each request's state gathered by its state slot (steps whose
// heads fit take abc_register_step_cuda.cu's kernel instead, with the same math). Prefill:
// grid (heads), the block scans the chunk's tokens in order. Nothing is sized or templated on
// dk or dv (both are runtime loop bounds and shared-memory extents), so dk != dv needs no
// separate instantiation.
#include <cmath>

#include "kernels/abc_attention.h"
#include "kernels/cuda/abc_register_step.cuh"
#include "kernels/cuda/recurrent_head.cuh"

namespace slotserve::kernels {
namespace {

using cuda::kWarpSize;

struct AbcShared {
  float* q;        // [dk]
  float* k;        // [dk]
  float* v;        // [dv]
  float* decay;    // [M]
  float* weight;   // [M]
  float* inv_z;    // [M]
  float* score;    // [M], then attention weights / z
  float* partial;  // [blockDim]
  float* scratch;  // [32]

  __device__ AbcShared(float* base, int dk, int dv, int memory_rows) {
    q = base;
    k = q + dk;
    v = k + dk;
    decay = v + dv;
    weight = decay + memory_rows;
    inv_z = weight + memory_rows;
    score = inv_z + memory_rows;
    partial = score + memory_rows;
    scratch = partial + blockDim.x;
  }
};

std::size_t AbcSharedBytes(const AbcParams& p, int threads) {
  // `partial` needs blockDim floats: UpdateRowsAndReduceColumns over dv columns uses at most
  // (threads / dv) * dv of them.
  return sizeof(float) *
         (2 * p.head_dim + AbcValueDim(p) + 4 * p.memory_rows + threads + kWarpSize);
}

// Absorbs input row `row` into one head's state and writes that head's output.
__device__ void AbcHeadToken(const AbcParams& p, int row, int h, float* head_state,
                             AbcShared& shared) {
  const int dk = p.head_dim;
  const int dv = AbcValueDim(p);
  const int memory_rows = p.memory_rows;
  float* key_sum = head_state;                    // K~ [M x dk]
  float* value_sum = key_sum + memory_rows * dk;  // V~ [M x dv]
  float* z = value_sum + memory_rows * dv;        // [M]
  float* running_max = z + memory_rows;           // [M]
  const int64_t in_row = static_cast<int64_t>(row) * p.in_stride;

  __syncthreads();  // shared inputs of the previous token (prefill) are no longer read
  cuda::LoadScaled(p.q + in_row + h * dk, dk, 1.0f, shared.q);
  cuda::LoadScaled(p.k + in_row + h * dk, dk, 1.0f, shared.k);
  cuda::LoadScaled(p.v + in_row + h * dv, dv, 1.0f, shared.v);
  const float* logits = p.memory_logits + in_row + static_cast<int64_t>(h) * memory_rows;
  for (int i = threadIdx.x; i < memory_rows; i += blockDim.x) {
    const float s = AbcClampLogit(logits[i], p.logit_min, p.logit_max);
    const float old_z = z[i];
    // An empty memory row (z == 0) has running max -inf: its old contents get weight 0.
    const bool empty = old_z == 0.0f;
    const float new_max = empty ? s : fmaxf(running_max[i], s);
    const float decay = empty ? 0.0f : expf(running_max[i] - new_max);
    const float weight = expf(s - new_max);
    const float new_z = decay * old_z + weight;
    z[i] = new_z;
    running_max[i] = new_max;
    shared.decay[i] = decay;
    shared.weight[i] = weight;
    shared.inv_z[i] = 1.0f / new_z;
  }
  __syncthreads();

  const int lane = threadIdx.x % kWarpSize;
  const int warps = blockDim.x / kWarpSize;
  const float score_scale = rsqrtf(static_cast<float>(dk));
  for (int i = threadIdx.x / kWarpSize; i < memory_rows; i += warps) {
    const float decay = shared.decay[i];
    const float weight = shared.weight[i];
    float* key_row = key_sum + static_cast<int64_t>(i) * dk;
    float dot = 0.0f;
    for (int j = lane; j < dk; j += kWarpSize) {
      const float updated = decay * key_row[j] + weight * shared.k[j];
      key_row[j] = updated;
      dot += updated * shared.q[j];
    }
    dot = cuda::WarpSum(dot);
    if (lane == 0) shared.score[i] = dot * shared.inv_z[i] * score_scale;
  }
  cuda::BlockSoftmax(shared.score, memory_rows, shared.scratch);
  for (int i = threadIdx.x; i < memory_rows; i += blockDim.x) shared.score[i] *= shared.inv_z[i];

  float* out = p.out + static_cast<int64_t>(row) * p.out_stride + h * dv;
  cuda::UpdateRowsAndReduceColumns(
      value_sum, memory_rows, dv, shared.score,
      [&](int i, int j, float old) {
        return shared.decay[i] * old + shared.weight[i] * shared.v[j];
      },
      [&](int j, float sum) { out[j] = sum; }, shared.partial);
}

struct AbcOp {
  using Params = AbcParams;
  static constexpr bool kUsesPosition = false;
  __host__ __device__ static int64_t HeadFloats(const Params& p) {
    return AbcStateFloatsPerHead(p.head_dim, AbcValueDim(p), p.memory_rows);
  }
  static std::size_t SharedBytes(const Params& p, int threads) {
    return AbcSharedBytes(p, threads);
  }
  // A warp per memory row (step 2), so each lane's chain of dependent state loads is one row
  // long: with kStepThreads, at batch 1 of a 16-layer, 2048-wide model with 32 slots, each warp
  // walked 8 rows and the layer's 16 blocks took 25 us of a 77 us layer on an H200.
  // cuda::BlockThreads scales it down for large grids.
  static int Threads(const Params& p) {
    int threads = cuda::kStepThreads;
    while (threads < kWarpSize * p.memory_rows && threads < cuda::kMaxBlockThreads) threads *= 2;
    return threads;
  }
  __device__ static void Token(const Params& p, int row, int32_t /*position*/, int h,
                               float* head_state, float* shared_memory) {
    AbcShared shared(shared_memory, p.head_dim, AbcValueDim(p), p.memory_rows);
    AbcHeadToken(p, row, h, head_state, shared);
  }
};

}  // namespace

template <>
void LaunchAbcPrefill<Backend::kCuda>(const AbcParams& p, const PrefillTarget& target,
                                      Stream stream) {
  cuda::LaunchRecurrentPrefill<AbcOp>(p, target, stream);
}

template <>
void LaunchAbcStep<Backend::kCuda>(const AbcParams& p, const StepTarget& target, Stream stream) {
  // Small batches of heads up to 128 wide with up to 32 memory rows (our models) hold the
  // state in registers: one round of loads instead of a chain (abc_register_step.cuh).
  if (cuda::AbcRegisterStepApplies(p)) {
    return cuda::LaunchAbcRegisterStep(p, target, cuda::AsCudaStream(stream));
  }
  cuda::LaunchRecurrentStep<AbcOp>(p, target, stream);
}

}  // namespace slotserve::kernels
