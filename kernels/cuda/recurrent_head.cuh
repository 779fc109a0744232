// Building blocks of the fused recurrent-attention kernels (ABC, RFA, Luna). Each of those
// kernels gives one thread block one (token, head): it updates that head's state in place and
// reads the output from it, so one launch covers a whole layer. A step launch has a block per
// (request, head), the request's state found through its slot; a prefill launch has a block
// per head that scans the chunk's tokens in order.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/programmatic_launch.cuh"
#include "kernels/cuda/reductions.cuh"
#include "kernels/recurrent_state.h"

namespace slotserve::kernels::cuda {

constexpr int kStepThreads = 128;
constexpr int kPrefillThreads = 256;
constexpr int kMaxBlockThreads = 1024;

// Start of one layer's state inside `slot`'s block of the arena.
__device__ __forceinline__ float* LayerStateOf(const StateView& view, int32_t slot) {
  return view.pool + static_cast<int64_t>(slot) * view.slot_stride + view.layer_offset;
}

// For a row-major matrix [rows x cols] in global memory: replaces every element m[i][j] by
// update(i, j, m[i][j]) and, in the same pass, forms column sums
// result_j = sum_i weight[i] * m'[i][j] of the updated matrix, handing each to store(j, sum).
// Consecutive threads take consecutive columns (coalesced); when the block has more threads
// than columns, groups of threads split the rows and their partial sums are added in a fixed
// order (deterministic). `partial` is shared memory of blockDim.x floats. Begins and ends with
// __syncthreads, so every thread of the block must call it.
template <typename Update, typename Store>
__device__ void UpdateRowsAndReduceColumns(float* matrix, int rows, int cols, const float* weight,
                                           Update update, Store store, float* partial) {
  __syncthreads();
  const int threads = blockDim.x;
  if (cols >= threads) {
    for (int j = threadIdx.x; j < cols; j += threads) {
      float sum = 0.0f;
      for (int i = 0; i < rows; ++i) {
        float* element = matrix + static_cast<int64_t>(i) * cols + j;
        const float updated = update(i, j, *element);
        *element = updated;
        sum += weight[i] * updated;
      }
      store(j, sum);
    }
    __syncthreads();
    return;
  }
  const int groups = threads / cols;
  const int group = threadIdx.x / cols;
  const int j = threadIdx.x % cols;
  if (group < groups) {
    float sum = 0.0f;
    for (int i = group; i < rows; i += groups) {
      float* element = matrix + static_cast<int64_t>(i) * cols + j;
      const float updated = update(i, j, *element);
      *element = updated;
      sum += weight[i] * updated;
    }
    partial[group * cols + j] = sum;
  }
  __syncthreads();
  if (threadIdx.x < cols) {
    float sum = 0.0f;
    for (int g = 0; g < groups; ++g) sum += partial[g * cols + threadIdx.x];
    store(threadIdx.x, sum);
  }
  __syncthreads();
}

// Copies `count` floats from global to shared memory, scaled (threads stride over elements).
__device__ __forceinline__ void LoadScaled(const float* source, int count, float scale,
                                           float* target) {
  for (int i = threadIdx.x; i < count; i += blockDim.x) target[i] = source[i] * scale;
}

// In-place softmax of `count` shared-memory scores (block-wide; every thread must call it).
__device__ __forceinline__ void BlockSoftmax(float* scores, int count, float* scratch) {
  __syncthreads();
  float local_max = -INFINITY;
  for (int i = threadIdx.x; i < count; i += blockDim.x) local_max = fmaxf(local_max, scores[i]);
  const float max_score = BlockMax(local_max, scratch);
  float local_sum = 0.0f;
  for (int i = threadIdx.x; i < count; i += blockDim.x) {
    const float e = expf(scores[i] - max_score);
    scores[i] = e;
    local_sum += e;
  }
  const float inv_sum = 1.0f / BlockSum(local_sum, scratch);
  for (int i = threadIdx.x; i < count; i += blockDim.x) scores[i] *= inv_sum;
  __syncthreads();
}

// Dynamic shared memory above 48 KiB must be opted into per kernel.
template <typename Kernel>
void AllowSharedMemory(Kernel kernel, std::size_t bytes) {
  if (bytes > (48u << 10)) {
    SLOTSERVE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              static_cast<int>(bytes)));
  }
}

// The step and prefill kernels of a recurrent attention kind. `Op` supplies
//   using Params;                          the op's parameter struct
//   static constexpr bool kUsesPosition;   whether Token needs the token's position
//   __host__ __device__ static int64_t HeadFloats(const Params&);   state floats per head
//   static std::size_t SharedBytes(const Params&, int threads);     dynamic shared memory
//   __device__ static void Token(const Params&, int row, int32_t position, int head,
//                                float* head_state, float* shared);
// where Token absorbs input row `row` into one head's state and writes that head's output, and
// optionally
//   static int Threads(const Params&);     the most useful threads per block (a power of 2)
// for an op whose blocks are bound by serial chains of dependent state loads when the grid is
// small (BlockThreads).
template <typename Op>
__global__ void RecurrentStepKernel(typename Op::Params p, StepTarget target) {
  extern __shared__ float shared[];
  // The output projection after this kernel may start issuing its weight loads.
  AllowDependentLaunch();
  const int h = blockIdx.x;
  const int row = blockIdx.y;
  float* head_state = LayerStateOf(target.state, target.slots[row]) + h * Op::HeadFloats(p);
  const int32_t position = Op::kUsesPosition ? target.positions[row] : 0;
  Op::Token(p, row, position, h, head_state, shared);
}

template <typename Op>
__global__ void RecurrentPrefillKernel(typename Op::Params p, PrefillTarget target) {
  extern __shared__ float shared[];
  const int h = blockIdx.x;
  float* head_state = LayerStateOf(target.state, target.slot) + h * Op::HeadFloats(p);
  for (int row = 0; row < p.rows; ++row) {
    Op::Token(p, row, target.start_position + row, h, head_state, shared);
  }
}

// Threads the current GPU keeps resident (SMs x threads per SM), asked once per process.
inline int64_t ResidentThreads() {
  static const int64_t resident = [] {
    int device = 0, sms = 0, per_sm = 0;
    SLOTSERVE_CUDA_CHECK(cudaGetDevice(&device));
    SLOTSERVE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    SLOTSERVE_CUDA_CHECK(
        cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
    return static_cast<int64_t>(sms) * per_sm;
  }();
  return resident;
}

// Whether a grid of `threads` in all already fills the GPU: more than half the threads it keeps
// resident. Past that, extra threads per block only add synchronisation (BlockThreads), and the
// ABC register step gives way to the generic kernel (abc_register_step_cuda.cu).
inline bool FillsTheGpu(int64_t threads) { return threads > ResidentThreads() / 2; }

// Threads per block for a grid of `blocks`: `otherwise` for an op without Threads(p); else
// Threads(p), halved (down to `otherwise`) while the grid would hold more than half the threads
// the GPU keeps resident. A small grid (decode at small batches, prefill: a block per head)
// gains from splitting each block's load chains; a large one already fills the GPU, and extra
// threads only add synchronisation. On an H200 (ABC, 32 slots, 16 heads of 128) 1024-thread
// blocks made a batch-1 step x1.38 faster but batch 256 x0.72 slower; with this rule neither
// loses. The block size then depends on the batch, as the linears' kernels already do (GEMV
// for 1-2 rows, GEMM above): results across batch sizes agree within rounding, not bitwise.
template <typename Op>
int BlockThreads(const typename Op::Params& p, int64_t blocks, int otherwise) {
  if constexpr (requires { Op::Threads(p); }) {
    int threads = std::max(Op::Threads(p), otherwise);
    while (threads > otherwise && FillsTheGpu(blocks * threads)) threads /= 2;
    return threads;
  } else {
    return otherwise;
  }
}

// Step: a block per (head, request). Prefill: a block per head scanning the chunk in order
// (a chunk's tokens depend on each other only through the state).
template <typename Op>
void LaunchRecurrentStep(const typename Op::Params& p, const StepTarget& target, Stream stream) {
  if (p.rows == 0) return;
  const int threads = BlockThreads<Op>(p, static_cast<int64_t>(p.heads) * p.rows, kStepThreads);
  const std::size_t shared_bytes = Op::SharedBytes(p, threads);
  AllowSharedMemory(RecurrentStepKernel<Op>, shared_bytes);
  RecurrentStepKernel<Op>
      <<<dim3(p.heads, p.rows), threads, shared_bytes, AsCudaStream(stream)>>>(p, target);
  SLOTSERVE_CUDA_CHECK_LAUNCH();
}

template <typename Op>
void LaunchRecurrentPrefill(const typename Op::Params& p, const PrefillTarget& target,
                            Stream stream) {
  if (p.rows == 0) return;
  const int threads = BlockThreads<Op>(p, p.heads, kPrefillThreads);
  const std::size_t shared_bytes = Op::SharedBytes(p, threads);
  AllowSharedMemory(RecurrentPrefillKernel<Op>, shared_bytes);
  RecurrentPrefillKernel<Op><<<p.heads, threads, shared_bytes, AsCudaStream(stream)>>>(p, target);
  SLOTSERVE_CUDA_CHECK_LAUNCH();
}

}  // namespace slotserve::kernels::cuda
