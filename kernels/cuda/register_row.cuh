// A row held in registers across one block, for the row-wise kernels (layer norm, RMS norm) that
// read each element several times. Thread t holds elements t, t + blockDim.x, ... (kPerThread of
// them), loaded by unrolled, independent loads: one memory latency per row instead of one per
// element and pass, which is what bounds these kernels at decode (a 2048-wide row in a single
// block took 10 us with a strided loop per pass on an H200).
#pragma once

#include <cuda_runtime.h>

namespace slotserve::kernels::cuda {

// Values per thread of the register paths; rows wider than kMaxRegisterRowThreads times the
// larger one take the kernels' looped path.
constexpr int kRegisterRowSmall = 4;
constexpr int kRegisterRowLarge = 8;
constexpr int kMaxRegisterRowThreads = 1024;

// Threads for a block holding `dim` values, `per_thread` each: whole warps, at least one.
inline int RegisterRowThreads(int dim, int per_thread) {
  const int needed = (dim + per_thread - 1) / per_thread;
  const int warps = (needed + 31) / 32;
  return (warps < 1 ? 1 : warps) * 32;
}

template <int kPerThread>
struct RegisterRow {
  float values[kPerThread];

  // Loads row[0..dim); map(value) is stored (e.g. silu of the input), 0 past dim.
  template <typename Map>
  __device__ __forceinline__ void Load(const float* row, int dim, Map map) {
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const int c = threadIdx.x + k * blockDim.x;
      values[k] = c < dim ? map(row[c]) : 0.0f;
    }
  }

  // This thread's partial sum of f(value) over its elements (elements past dim count 0).
  template <typename F>
  __device__ __forceinline__ float Sum(int dim, F f) const {
    float sum = 0.0f;
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      if (threadIdx.x + k * blockDim.x < dim) sum += f(values[k]);
    }
    return sum;
  }

  // Calls store(c, value) for each of this thread's elements c < dim.
  template <typename Store>
  __device__ __forceinline__ void ForEach(int dim, Store store) const {
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const int c = threadIdx.x + k * blockDim.x;
      if (c < dim) store(c, values[k]);
    }
  }
};

}  // namespace slotserve::kernels::cuda
