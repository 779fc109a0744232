// CUDA GSA (kernels/gsa_attention.h). One block per (token, kv head), serving the kv head's
// whole group of G = H / Hkv query heads:
//   1. features into shared memory: phi(k), silu(v), the gates decay and s per slot, and phi(q)
//      of the G query heads;
//   2. hk and hv updated in place, one thread per element;
//   3. scores[h][m] = sum_d phi(q_h)[d] hk[d, m], a weighted column sum of hk;
//   4. a softmax per query head; out_h[j] = sum_m p_h[m] hv[m, j], a weighted column sum of hv.
// Step: grid (kv heads, requests), each request's state found through its slot. Prefill: grid
// (kv heads), each block scanning the chunk's tokens in order.
#include <cmath>

#include "kernels/cuda/recurrent_head.cuh"
#include "kernels/gsa_attention.h"

namespace slotserve::kernels {
namespace {

using cuda::kWarpSize;

struct GsaShared {
  float* k;        // [dk]
  float* v;        // [dv]
  float* decay;    // [M]
  float* write;    // [M]
  float* q;        // [G x dk]
  float* score;    // [G x M], then the attention weights
  float* partial;  // [blockDim]
  float* scratch;  // [32]

  __device__ GsaShared(float* base, const GsaParams& p) {
    const int group = p.heads / p.kv_heads;
    k = base;
    v = k + p.key_dim;
    decay = v + p.value_dim;
    write = decay + p.memory_rows;
    q = write + p.memory_rows;
    score = q + group * p.key_dim;
    partial = score + group * p.memory_rows;
    scratch = partial + blockDim.x;
  }
};

std::size_t GsaSharedBytes(const GsaParams& p, int threads) {
  const int group = p.heads / p.kv_heads;
  return sizeof(float) * (p.key_dim + p.value_dim + 2 * p.memory_rows +
                          group * (p.key_dim + p.memory_rows) + threads + kWarpSize);
}

__device__ __forceinline__ float Silu(float x) { return x / (1.0f + expf(-x)); }

// phi of one head's dk raw values x (global memory) into shared `phi`. For t2r every thread reads
// all of x from global memory (one cached row, the same address across a warp). It used to be
// staged in shared memory just before phi: for a width not a multiple of 4, ptxas read the last
// 1-3 staged values with one 16-byte load that also covered phi's first values while another
// thread wrote them. Those bytes went unused, but racecheck reported the overlap (on an H200,
// key_dim 5). Begins and ends with __syncthreads, so every thread of the block must call it.
__device__ void FeatureMap(const GsaParams& p, const float* x, float* phi) {
  const int dk = p.key_dim;
  __syncthreads();
  if (p.feature_map == GsaFeatureMap::kT2r) {
    for (int i = threadIdx.x; i < dk; i += blockDim.x) {  // relu(x W^T): row i of W times x
      const float* w_row = p.t2r_weight + static_cast<int64_t>(i) * dk;
      float dot = 0.0f;
      for (int j = 0; j < dk; ++j) dot += w_row[j] * x[j];
      phi[i] = fmaxf(0.0f, dot);
    }
  } else {
    const bool swish = p.feature_map == GsaFeatureMap::kSwish;
    for (int i = threadIdx.x; i < dk; i += blockDim.x) {
      phi[i] = swish ? Silu(x[i]) : fmaxf(0.0f, x[i]);
    }
  }
  __syncthreads();
}

// For a row-major matrix [rows x cols] and `sets` weight vectors weight[s][0..rows), hands
// store(s, j, sum_i weight[s][i] * matrix[i][j]) for every (s, j). Consecutive threads take
// consecutive outputs (coalesced along a row); when the block has more threads than outputs,
// groups of threads split the rows and their partial sums are added in a fixed order
// (deterministic). `partial` is shared memory of blockDim.x floats. Begins and ends with
// __syncthreads, so every thread of the block must call it.
template <typename Store>
__device__ void WeightedColumnSums(const float* matrix, int rows, int cols, const float* weight,
                                   int sets, Store store, float* partial) {
  __syncthreads();
  const int outputs = sets * cols;
  const int threads = blockDim.x;
  if (outputs >= threads) {
    for (int o = threadIdx.x; o < outputs; o += threads) {
      const int s = o / cols;
      const int j = o % cols;
      float sum = 0.0f;
      for (int i = 0; i < rows; ++i) {
        sum += weight[s * rows + i] * matrix[static_cast<int64_t>(i) * cols + j];
      }
      store(s, j, sum);
    }
    __syncthreads();
    return;
  }
  const int groups = threads / outputs;
  const int group = threadIdx.x / outputs;
  const int o = threadIdx.x % outputs;
  const int s = o / cols;
  const int j = o % cols;
  if (group < groups) {
    float sum = 0.0f;
    for (int i = group; i < rows; i += groups) {
      sum += weight[s * rows + i] * matrix[static_cast<int64_t>(i) * cols + j];
    }
    partial[group * outputs + o] = sum;
  }
  __syncthreads();
  if (threadIdx.x < outputs) {
    float sum = 0.0f;
    for (int g = 0; g < groups; ++g) sum += partial[g * outputs + threadIdx.x];
    store(s, j, sum);
  }
  __syncthreads();
}

// Absorbs input row `row` into kv head g's state and writes the outputs of its query heads.
__device__ void GsaKvHeadToken(const GsaParams& p, int row, int g, float* kv_state,
                               GsaShared& shared) {
  const int dk = p.key_dim;
  const int dv = p.value_dim;
  const int memory_rows = p.memory_rows;
  const int group = p.heads / p.kv_heads;
  const int64_t in_row = static_cast<int64_t>(row) * p.in_stride;
  float* hk = kv_state;                                           // [dk x M]
  float* hv = kv_state + static_cast<int64_t>(dk) * memory_rows;  // [M x dv]

  // The previous token (prefill) may still read the shared inputs: FeatureMap syncs first.
  FeatureMap(p, p.k + in_row + static_cast<int64_t>(g) * dk, shared.k);
  for (int i = 0; i < group; ++i) {
    FeatureMap(p, p.q + in_row + static_cast<int64_t>(g * group + i) * dk, shared.q + i * dk);
  }
  const float* v_raw = p.v + in_row + static_cast<int64_t>(g) * dv;
  for (int j = threadIdx.x; j < dv; j += blockDim.x) shared.v[j] = Silu(v_raw[j]);
  const float* logits = p.forget_logits + in_row + static_cast<int64_t>(g) * memory_rows;
  const float inv_normalizer = 1.0f / p.gate_logit_normalizer;
  for (int m = threadIdx.x; m < memory_rows; m += blockDim.x) {
    // Stable logsigmoid; s = -expm1(f) keeps the small writes of gates close to 1 accurate.
    const float x = logits[m];
    const float f = (fminf(0.0f, x) - log1pf(expf(-fabsf(x)))) * inv_normalizer;
    shared.decay[m] = expf(f);
    shared.write[m] = -expm1f(f);
  }
  __syncthreads();

  const int64_t key_cells = static_cast<int64_t>(dk) * memory_rows;
  for (int64_t c = threadIdx.x; c < key_cells; c += blockDim.x) {
    const int d = static_cast<int>(c / memory_rows);
    const int m = static_cast<int>(c % memory_rows);
    hk[c] = shared.decay[m] * hk[c] + shared.write[m] * shared.k[d];
  }
  const int64_t value_cells = static_cast<int64_t>(memory_rows) * dv;
  for (int64_t c = threadIdx.x; c < value_cells; c += blockDim.x) {
    const int m = static_cast<int>(c / dv);
    const int j = static_cast<int>(c % dv);
    hv[c] = shared.decay[m] * hv[c] + shared.write[m] * shared.v[j];
  }
  // Each thread rereads cells other threads wrote: global writes must be visible block-wide,
  // which the __syncthreads at the start of WeightedColumnSums guarantees.
  float* score = shared.score;
  WeightedColumnSums(
      hk, dk, memory_rows, shared.q, group,
      [&](int i, int m, float sum) { score[i * memory_rows + m] = sum; }, shared.partial);
  for (int i = 0; i < group; ++i) {
    cuda::BlockSoftmax(score + i * memory_rows, memory_rows, shared.scratch);
  }

  float* out =
      p.out + static_cast<int64_t>(row) * p.out_stride + static_cast<int64_t>(g) * group * dv;
  WeightedColumnSums(
      hv, memory_rows, dv, score, group,
      [&](int i, int j, float sum) { out[static_cast<int64_t>(i) * dv + j] = sum; },
      shared.partial);
}

__device__ __forceinline__ float* KvStateOf(const GsaParams& p, const StateView& view, int32_t slot,
                                            int g) {
  return cuda::LayerStateOf(view, slot) +
         g * GsaStateFloatsPerKvHead(p.key_dim, p.value_dim, p.memory_rows);
}

__global__ void GsaStepKernel(GsaParams p, StepTarget target) {
  extern __shared__ float shared_memory[];
  GsaShared shared(shared_memory, p);
  const int g = blockIdx.x;
  const int row = blockIdx.y;
  GsaKvHeadToken(p, row, g, KvStateOf(p, target.state, target.slots[row], g), shared);
}

__global__ void GsaPrefillKernel(GsaParams p, PrefillTarget target) {
  extern __shared__ float shared_memory[];
  GsaShared shared(shared_memory, p);
  const int g = blockIdx.x;
  float* kv_state = KvStateOf(p, target.state, target.slot, g);
  for (int row = 0; row < p.rows; ++row) GsaKvHeadToken(p, row, g, kv_state, shared);
}

}  // namespace

template <>
void LaunchGsaPrefill<Backend::kCuda>(const GsaParams& p, const PrefillTarget& target,
                                      Stream stream) {
  if (p.rows == 0) return;
  const std::size_t shared_bytes = GsaSharedBytes(p, cuda::kPrefillThreads);
  cuda::AllowSharedMemory(GsaPrefillKernel, shared_bytes);
  GsaPrefillKernel<<<p.kv_heads, cuda::kPrefillThreads, shared_bytes, cuda::AsCudaStream(stream)>>>(
      p, target);
  SLOTSERVE_CUDA_CHECK_LAUNCH();
}

template <>
void LaunchGsaStep<Backend::kCuda>(const GsaParams& p, const StepTarget& target, Stream stream) {
  if (p.rows == 0) return;
  const std::size_t shared_bytes = GsaSharedBytes(p, cuda::kStepThreads);
  cuda::AllowSharedMemory(GsaStepKernel, shared_bytes);
  GsaStepKernel<<<dim3(p.kv_heads, p.rows), cuda::kStepThreads, shared_bytes,
                  cuda::AsCudaStream(stream)>>>(p, target);
  SLOTSERVE_CUDA_CHECK_LAUNCH();
}

}  // namespace slotserve::kernels
