// CUDA token selection (semantics in kernels/sampling.h): one block per row, no sort and no
// scratch memory, so the op can sit inside a captured decode graph.
//
// The row's adjustments come first, in place: the block's threads share out its penalised
// tokens (distinct ids, so no two threads write one logit), then its biased tokens (distinct
// too), then its masked ids, with a block barrier after each (an id may be on all three lists;
// the order of the rule must hold and the masks must win).
//
// The kept set of a row is always a prefix of the rank order (higher logit first, lower id on
// ties), described by a cut (tau, cut_id): token i is kept iff key_i > tau, or key_i == tau and
// i < cut_id, where key is the float's bits mapped to an order-preserving uint32. Each
// truncation finds its cut without sorting:
//   top_k: tau = the largest key with count(key >= tau) >= k (a 32-step binary search over key
//          bits, each step one counting pass), then the ties at tau are admitted in id order
//          until k tokens are kept;
//   top_p: the same search with weight sums instead of counts;
//   min_p: a plain filter on the weight.
// The draw then walks ids upwards with a block-wide prefix sum until the cumulative weight
// exceeds u * total. All reductions have a fixed shape, so a row's token is reproducible.
#include <climits>
#include <cmath>
#include <cstdint>

#include "kernels/counter_rng.h"
#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/reductions.cuh"
#include "kernels/sampling.h"

namespace slotserve::kernels {
namespace {

using cuda::kWarpSize;

constexpr int kSamplingThreads = 512;
constexpr int kSamplingWarps = kSamplingThreads / kWarpSize;

__device__ __forceinline__ uint32_t OrderedKey(float value) {
  const uint32_t bits = __float_as_uint(value);
  return (bits & 0x80000000u) != 0 ? ~bits : (bits | 0x80000000u);
}

struct SamplingShared {
  float scratch[kWarpSize];
  float warp_totals[kSamplingWarps];
  float warp_best_value[kSamplingWarps];
  int warp_best_id[kSamplingWarps];
  int first_id;
  int last_id;
  float best_value;
  int best_id;
};

// Lowest id with the largest value (NaN counts as -inf), to every thread.
__device__ void BlockArgMax(float value, int id, SamplingShared& shared, float* best_value,
                            int* best_id) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    const float other_value = __shfl_xor_sync(cuda::kFullMask, value, offset);
    const int other_id = __shfl_xor_sync(cuda::kFullMask, id, offset);
    if (other_value > value || (other_value == value && other_id < id)) {
      value = other_value;
      id = other_id;
    }
  }
  const int warp = threadIdx.x / kWarpSize;
  if (threadIdx.x % kWarpSize == 0) {
    shared.warp_best_value[warp] = value;
    shared.warp_best_id[warp] = id;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kSamplingWarps; ++w) {
      const float v = shared.warp_best_value[w];
      const int i = shared.warp_best_id[w];
      if (v > shared.warp_best_value[0] ||
          (v == shared.warp_best_value[0] && i < shared.warp_best_id[0])) {
        shared.warp_best_value[0] = v;
        shared.warp_best_id[0] = i;
      }
    }
    shared.best_value = shared.warp_best_value[0];
    shared.best_id = shared.warp_best_id[0];
  }
  __syncthreads();
  *best_value = shared.best_value;
  *best_id = shared.best_id;
}

// Inclusive prefix sum over the block (thread order); `tile_total` gets the block's total.
__device__ float BlockInclusiveScan(float value, SamplingShared& shared, float* tile_total) {
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  for (int offset = 1; offset < kWarpSize; offset *= 2) {
    const float other = __shfl_up_sync(cuda::kFullMask, value, offset);
    if (lane >= offset) value += other;
  }
  __syncthreads();  // warp_totals may still be read by the previous scan
  if (lane == kWarpSize - 1) shared.warp_totals[warp] = value;
  __syncthreads();
  float before = 0.0f;
  float total = 0.0f;
  for (int w = 0; w < kSamplingWarps; ++w) {
    if (w < warp) before += shared.warp_totals[w];
    total += shared.warp_totals[w];
  }
  *tile_total = total;
  return before + value;
}

class RowSampler {
 public:
  __device__ RowSampler(const float* logits, int vocab, SamplingShared& shared)
      : logits_(logits), vocab_(vocab), shared_(shared) {}

  __device__ bool Candidate(int i) const { return isfinite(logits_[i]); }
  __device__ uint32_t Key(int i) const { return OrderedKey(logits_[i]); }
  __device__ float Weight(int i) const {
    return Candidate(i) ? expf((logits_[i] - max_logit_) * inverse_temperature_) : 0.0f;
  }
  __device__ bool Kept(int i) const {
    if (!Candidate(i)) return false;
    const uint32_t key = Key(i);
    if (key < tau_ || (key == tau_ && i >= cut_id_)) return false;
    return min_weight_ <= 0.0f || Weight(i) >= min_weight_;
  }

  // Block-wide sum of value(i) over all ids.
  template <typename Value>
  __device__ float Sum(Value value) {
    float sum = 0.0f;
    for (int i = threadIdx.x; i < vocab_; i += blockDim.x) sum += value(i);
    return cuda::BlockSum(sum, shared_.scratch);
  }

  // The largest key t with measure(t) >= target, for a measure non-increasing in t.
  template <typename Measure>
  __device__ uint32_t LargestThreshold(Measure measure, float target) {
    uint32_t threshold = 0;
    for (int bit = 31; bit >= 0; --bit) {
      const uint32_t trial = threshold | (1u << bit);
      if (measure(trial) >= target) threshold = trial;
    }
    return threshold;
  }

  // The first id, walking upwards, at which the running sum of value(i) > 0 crosses `target`
  // (strictly when `strict`); -1 when it never does. `last_positive` gets the last id with a
  // positive value.
  template <typename Value>
  __device__ int FirstCrossing(Value value, float target, bool strict, int* last_positive) {
    __syncthreads();  // the previous crossing's result may still be being read
    if (threadIdx.x == 0) shared_.last_id = -1;
    float carried = 0.0f;
    for (int base = 0; base < vocab_; base += blockDim.x) {
      const int i = base + threadIdx.x;
      const float v = i < vocab_ ? value(i) : 0.0f;
      if (threadIdx.x == 0) shared_.first_id = INT_MAX;
      float tile_total;
      const float cumulative = carried + BlockInclusiveScan(v, shared_, &tile_total);
      if (v > 0.0f) {
        atomicMax(&shared_.last_id, i);
        if (strict ? cumulative > target : cumulative >= target) atomicMin(&shared_.first_id, i);
      }
      __syncthreads();
      const int first = shared_.first_id;
      if (first != INT_MAX) {
        *last_positive = shared_.last_id;
        return first;
      }
      carried += tile_total;
      // Thread 0 resets first_id for the next tile only after every thread has read it
      // (racecheck reported the read racing with that write).
      __syncthreads();
    }
    *last_positive = shared_.last_id;
    return -1;
  }

  __device__ int32_t Sample(float temperature, int32_t top_k, float top_p, float min_p,
                            double uniform) {
    // Argmax (NaN as -inf) and the largest finite logit in one pass.
    float best = -INFINITY;
    int best_id = INT_MAX;
    float finite_max = -INFINITY;
    for (int i = threadIdx.x; i < vocab_; i += blockDim.x) {
      const float value = isnan(logits_[i]) ? -INFINITY : logits_[i];
      if (value > best || (value == best && i < best_id)) {
        best = value;
        best_id = i;
      }
      if (isfinite(value)) finite_max = fmaxf(finite_max, value);
    }
    float argmax_value;
    int argmax_id;
    BlockArgMax(best, best_id, shared_, &argmax_value, &argmax_id);
    max_logit_ = cuda::BlockMax(finite_max, shared_.scratch);
    if (temperature <= 0.0f || !isfinite(max_logit_)) return argmax_id;
    inverse_temperature_ = 1.0f / temperature;

    const float candidates = Sum([&](int i) { return Candidate(i) ? 1.0f : 0.0f; });
    if (top_k > 0 && static_cast<float>(top_k) < candidates) {
      const uint32_t tau = LargestThreshold(
          [&](uint32_t t) { return Sum([&](int i) { return Candidate(i) && Key(i) >= t; }); },
          static_cast<float>(top_k));
      const float above = Sum([&](int i) { return Candidate(i) && Key(i) > tau ? 1.0f : 0.0f; });
      int unused;
      const int first =
          FirstCrossing([&](int i) { return Candidate(i) && Key(i) == tau ? 1.0f : 0.0f; },
                        static_cast<float>(top_k) - above, /*strict=*/false, &unused);
      tau_ = tau;
      cut_id_ = first >= 0 ? first + 1 : vocab_;
    }
    if (top_p < 1.0f) {
      const float target = top_p * Sum([&](int i) { return Kept(i) ? Weight(i) : 0.0f; });
      const uint32_t tau = LargestThreshold(
          [&](uint32_t t) {
            return Sum([&](int i) { return Kept(i) && Key(i) >= t ? Weight(i) : 0.0f; });
          },
          target);
      const float above = Sum([&](int i) { return Kept(i) && Key(i) > tau ? Weight(i) : 0.0f; });
      int unused;
      const int first =
          FirstCrossing([&](int i) { return Kept(i) && Key(i) == tau ? Weight(i) : 0.0f; },
                        target - above, /*strict=*/false, &unused);
      if (first >= 0) {
        cut_id_ = first + 1;
      } else if (tau != tau_) {
        cut_id_ = vocab_;  // rounding: admit every tie
      }
      tau_ = tau;
    }
    min_weight_ = min_p;

    const float total = Sum([&](int i) { return Kept(i) ? Weight(i) : 0.0f; });
    int last_kept;
    const int chosen =
        FirstCrossing([&](int i) { return Kept(i) ? Weight(i) : 0.0f; },
                      static_cast<float>(uniform * total), /*strict=*/true, &last_kept);
    return chosen >= 0 ? chosen : last_kept;  // rounding left the target at the very end
  }

 private:
  const float* logits_;
  int vocab_;
  SamplingShared& shared_;
  float max_logit_ = -INFINITY;
  float inverse_temperature_ = 1.0f;
  uint32_t tau_ = 0;  // every finite logit has a key above 0
  int cut_id_ = INT_MAX;
  float min_weight_ = 0.0f;
};

// Steps 1 to 3 of the rule on this block's row; every thread of the block must call it.
__device__ void AdjustRow(const SamplingParams& p, int row, float* logits) {
  if (p.penalised_offsets != nullptr && p.penalised != nullptr) {
    const float repetition = p.repetition_penalty != nullptr ? p.repetition_penalty[row] : 1.0f;
    const float presence = p.presence_penalty != nullptr ? p.presence_penalty[row] : 0.0f;
    const float frequency = p.frequency_penalty != nullptr ? p.frequency_penalty[row] : 0.0f;
    for (int i = p.penalised_offsets[row] + threadIdx.x; i < p.penalised_offsets[row + 1];
         i += blockDim.x) {
      const PenalisedToken token = p.penalised[i];
      if (token.id >= 0 && token.id < p.vocab) {
        logits[token.id] = PenalisedLogit(logits[token.id], token, repetition, presence, frequency);
      }
    }
  }
  __syncthreads();
  if (p.biased_offsets != nullptr && p.biased != nullptr) {
    for (int i = p.biased_offsets[row] + threadIdx.x; i < p.biased_offsets[row + 1];
         i += blockDim.x) {
      const BiasedToken token = p.biased[i];
      if (token.id >= 0 && token.id < p.vocab) logits[token.id] += token.bias;
    }
  }
  __syncthreads();
  if (p.masked_offsets != nullptr && p.masked != nullptr) {
    for (int i = p.masked_offsets[row] + threadIdx.x; i < p.masked_offsets[row + 1];
         i += blockDim.x) {
      const int32_t id = p.masked[i];
      if (id >= 0 && id < p.vocab) logits[id] = -INFINITY;
    }
  }
  __syncthreads();
}

__global__ void SamplingKernel(SamplingParams p) {
  __shared__ SamplingShared shared;
  const int row = blockIdx.x;
  AdjustRow(p, row, p.logits + row * p.logits_stride);
  RowSampler sampler(p.logits + row * p.logits_stride, p.vocab, shared);
  const int32_t token = sampler.Sample(p.temperature[row], p.top_k != nullptr ? p.top_k[row] : 0,
                                       p.top_p != nullptr ? p.top_p[row] : 1.0f,
                                       p.min_p != nullptr ? p.min_p[row] : 0.0f,
                                       UniformDraw(p.seeds[row], p.draw_index[row]));
  if (threadIdx.x == 0) p.out_tokens[row] = token;
}

}  // namespace

template <>
void LaunchSampling<Backend::kCuda>(const SamplingParams& p, Stream stream) {
  if (p.rows == 0) return;
  SamplingKernel<<<p.rows, kSamplingThreads, 0, cuda::AsCudaStream(stream)>>>(p);
  SLOTSERVE_CUDA_CHECK_LAUNCH();
}

}  // namespace slotserve::kernels
