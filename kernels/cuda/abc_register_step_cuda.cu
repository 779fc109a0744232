// The ABC decode step with the state in registers (abc_register_step.cuh). One block per
// (head, request), as the generic step kernel; inside it warp w owns memory rows w, w + W, ...
// (kRowsPerWarp of them, W warps) and lane l owns columns l, l + 32, ... (kChunks of them) of
// that row's K~ and V~. The math is AbcHeadToken's (abc_attention_cuda.cu), in this order:
//   1. after the wait, every load at once: q, k, v, the row's logit, z, m, K~ row, V~ row;
//   2. per row (all lanes alike): new max, decay c, weight w, z' = c z + w;
//      K~ = c K~ + w k and its score (K~ q) / z' / sqrt(dk), a warp sum;
//   3. the M scores meet in shared memory; each warp takes their softmax itself (no block
//      reduction), so a_i = softmax_i / z'_i;
//   4. V~ = c V~ + w v, and each warp's column sums over its rows meet in shared memory, added
//      in warp order (deterministic for a given block size).
// Only one row a warp (kRowsPerWarp = 1, W = M) is launched: AbcRegisterStepApplies keeps the
// kernel to small grids. The forms with more rows a warp (fewer threads a block, for larger
// grids) ran in the benchmark only, where at batch 256 the generic kernel beat them
// (bench/results/gpu_fourth_run.md); they were never checked against the reference, so they are
// not launched. The batch size decides which kernel runs, so results across batch sizes agree
// within rounding, as they already do through the linears (GEMV at 1-2 rows, GEMM above).
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "kernels/cuda/abc_register_step.cuh"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/programmatic_launch.cuh"
#include "kernels/cuda/recurrent_head.cuh"
#include "kernels/cuda/reductions.cuh"

namespace slotserve::kernels::cuda {
namespace {

constexpr int kMaxWarps = kAbcRegisterStepMaxMemoryRows;
constexpr int kMaxChunks = kAbcRegisterStepMaxDim / kWarpSize;

// A block has at most 1024 / kRowsPerWarp threads, so that a thread holding more rows still
// gets the registers for them (64 a thread at 1024 threads, 128 at 512).
template <int kRowsPerWarp>
constexpr int kMaxThreads = (kMaxWarps * kWarpSize) / kRowsPerWarp;

template <int kRowsPerWarp, int kChunks>
__global__ void __launch_bounds__(kMaxThreads<kRowsPerWarp>)
    AbcRegisterStepKernel(AbcParams p, StepTarget target) {
  __shared__ float scores[kAbcRegisterStepMaxMemoryRows];
  __shared__ float column_sums[kMaxWarps][kMaxChunks * kWarpSize];
  // The output projection after this kernel may start issuing its weight loads.
  AllowDependentLaunch();
  const int h = blockIdx.x;
  const int row = blockIdx.y;
  const int warp = threadIdx.x / kWarpSize;
  const int lane = threadIdx.x % kWarpSize;
  const int warps = blockDim.x / kWarpSize;
  const int dk = p.head_dim;
  const int dv = AbcValueDim(p);
  const int memory_rows = p.memory_rows;
  const int64_t in_row = static_cast<int64_t>(row) * p.in_stride;

  // q, k, v and the logits come from the kernel before; the slots from the step's upload.
  WaitForPrecedingKernel();
  float* key_sum = LayerStateOf(target.state, target.slots[row]) +
                   h * AbcStateFloatsPerHead(dk, dv, memory_rows);
  float* value_sum = key_sum + memory_rows * dk;
  float* z = value_sum + memory_rows * dv;
  float* running_max = z + memory_rows;

  // 1. Every load, independent of each other.
  float q[kChunks], k[kChunks], v[kChunks];
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int j = lane + c * kWarpSize;
    q[c] = j < dk ? p.q[in_row + h * dk + j] : 0.0f;
    k[c] = j < dk ? p.k[in_row + h * dk + j] : 0.0f;
    v[c] = j < dv ? p.v[in_row + h * dv + j] : 0.0f;
  }
  const float* logits = p.memory_logits + in_row + static_cast<int64_t>(h) * memory_rows;
  float logit[kRowsPerWarp], old_z[kRowsPerWarp], old_max[kRowsPerWarp];
  float keys[kRowsPerWarp][kChunks], values[kRowsPerWarp][kChunks];
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    const int i = warp + r * warps;
    const bool mine = i < memory_rows;
    logit[r] = mine ? logits[i] : 0.0f;
    old_z[r] = mine ? z[i] : 0.0f;
    old_max[r] = mine ? running_max[i] : 0.0f;
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int j = lane + c * kWarpSize;
      keys[r][c] = mine && j < dk ? key_sum[i * dk + j] : 0.0f;
      values[r][c] = mine && j < dv ? value_sum[i * dv + j] : 0.0f;
    }
  }

  // 2. The row's decay and weight, K~ and its score.
  const float score_scale = rsqrtf(static_cast<float>(dk));
  float decay[kRowsPerWarp], weight[kRowsPerWarp], inv_z[kRowsPerWarp], score[kRowsPerWarp];
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    const int i = warp + r * warps;
    const float s = AbcClampLogit(logit[r], p.logit_min, p.logit_max);
    // An empty memory row (z == 0) has running max -inf: its old contents get weight 0.
    const bool empty = old_z[r] == 0.0f;
    const float new_max = empty ? s : fmaxf(old_max[r], s);
    decay[r] = empty ? 0.0f : expf(old_max[r] - new_max);
    weight[r] = expf(s - new_max);
    const float new_z = decay[r] * old_z[r] + weight[r];
    inv_z[r] = 1.0f / new_z;
    float dot = 0.0f;
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int j = lane + c * kWarpSize;
      if (i < memory_rows && j < dk) {
        const float updated = decay[r] * keys[r][c] + weight[r] * k[c];
        key_sum[i * dk + j] = updated;
        dot += updated * q[c];
      }
    }
    dot = WarpSum(dot);
    score[r] = dot * inv_z[r] * score_scale;
    if (i < memory_rows && lane == 0) {
      z[i] = new_z;
      running_max[i] = new_max;
      scores[i] = score[r];
    }
  }
  __syncthreads();

  // 3. Softmax over the M scores, each warp on its own; then each row's share divided by z'.
  float local_max = -INFINITY;
  for (int i = lane; i < memory_rows; i += kWarpSize) local_max = fmaxf(local_max, scores[i]);
  const float max_score = WarpMax(local_max);
  float local_sum = 0.0f;
  for (int i = lane; i < memory_rows; i += kWarpSize) local_sum += expf(scores[i] - max_score);
  const float inv_sum = 1.0f / WarpSum(local_sum);

  // 4. V~ and this warp's column sums of a_i V~_i over its rows.
  float sums[kChunks] = {};
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    const int i = warp + r * warps;
    if (i >= memory_rows) continue;
    const float attention = expf(score[r] - max_score) * inv_sum * inv_z[r];
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int j = lane + c * kWarpSize;
      if (j < dv) {
        const float updated = decay[r] * values[r][c] + weight[r] * v[c];
        value_sum[i * dv + j] = updated;
        sums[c] += attention * updated;
      }
    }
  }
#pragma unroll
  for (int c = 0; c < kChunks; ++c) column_sums[warp][lane + c * kWarpSize] = sums[c];
  __syncthreads();
  float* out = p.out + static_cast<int64_t>(row) * p.out_stride + h * dv;
  for (int j = threadIdx.x; j < dv; j += blockDim.x) {
    float sum = 0.0f;
    for (int w = 0; w < warps; ++w) sum += column_sums[w][j];
    out[j] = sum;
  }
}

bool RegisterStepEnabled() {
  static const bool enabled = [] {
    const char* setting = std::getenv("SLOTSERVE_CUDA_ABC_STEP");
    return setting == nullptr || std::strcmp(setting, "generic") != 0;
  }();
  return enabled;
}

}  // namespace

bool AbcRegisterStepApplies(const AbcParams& p) {
  const int dv = AbcValueDim(p);
  if (p.head_dim < 1 || p.head_dim > kAbcRegisterStepMaxDim || dv < 1 ||
      dv > kAbcRegisterStepMaxDim || p.memory_rows < 1 ||
      p.memory_rows > kAbcRegisterStepMaxMemoryRows || !RegisterStepEnabled()) {
    return false;
  }
  // Small grids only, with a warp per memory row (the rule of BlockThreads): on an H200 the
  // register step made a batch-1 step of a 2048-wide, 16-layer ABC model x1.12 faster, but at
  // batch 256 of the bundled model, with more rows a warp, it was x0.80.
  return !FillsTheGpu(static_cast<int64_t>(p.heads) * p.rows * p.memory_rows * kWarpSize);
}

void LaunchAbcRegisterStep(const AbcParams& p, const StepTarget& target, cudaStream_t stream) {
  if (p.rows == 0) return;
  const int widest = p.head_dim > AbcValueDim(p) ? p.head_dim : AbcValueDim(p);
  // One row a warp (AbcRegisterStepApplies).
  const dim3 grid(p.heads, p.rows);
  const dim3 block(p.memory_rows * kWarpSize);
  if (widest <= kWarpSize) {
    LaunchOverlappingPreceding(AbcRegisterStepKernel<1, 1>, grid, block, 0, stream, p, target);
  } else if (widest <= 2 * kWarpSize) {
    LaunchOverlappingPreceding(AbcRegisterStepKernel<1, 2>, grid, block, 0, stream, p, target);
  } else {
    LaunchOverlappingPreceding(AbcRegisterStepKernel<1, 4>, grid, block, 0, stream, p, target);
  }
}

}  // namespace slotserve::kernels::cuda
