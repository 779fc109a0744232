// SRformer's cross attention (docs/ARCHITECTURE.md "Encoder–decoder models", the segmented
// recurrent transformer's Algorithm 1): the memory build at Encode and the decode-time read, which
// also runs the recurrent attention function (RAF) whenever a request's decoder enters a new source
// segment.
//
// Per layer a request's state has two parts (floats):
//   the memory, written once by the build and only read by the steps, so a request's beams
//   share it (the request's cross memory block, with the source length n, a float, at
//   `length_offset` floats from the block's start):
//     K [capacity x H*d], V [capacity x H*d]   the source's projected keys and values
//     KV [H x d x d]                           KᵀV per head
//     k_norm [H]                               ‖K‖_F per head
//   the RAF state, which each hypothesis carries in its own slot (forked with it):
//     mem [H x d x d], R [H x d x d]           the RAF's membrane and output (start at 0)
//     entered [H]                              1 + the segment R belongs to; 0 before the first
// A zeroed RAF state is the state before the first step, so a fresh slot needs nothing.
#pragma once

#include <cstdint>

#include "kernels/backend.h"
#include "kernels/recurrent_state.h"

#ifdef __CUDACC__
#define SLOTSERVE_SRFORMER_HOST_DEVICE __host__ __device__
#else
#define SLOTSERVE_SRFORMER_HOST_DEVICE
#endif

namespace slotserve::kernels {

struct SrformerLayout {
  int heads = 0;
  int head_dim = 0;
  int capacity = 0;  // max_source_tokens

  SLOTSERVE_SRFORMER_HOST_DEVICE int64_t width() const {
    return static_cast<int64_t>(heads) * head_dim;
  }
  SLOTSERVE_SRFORMER_HOST_DEVICE int64_t square() const {
    return static_cast<int64_t>(heads) * head_dim * head_dim;
  }
  SLOTSERVE_SRFORMER_HOST_DEVICE int64_t keys() const { return 0; }
  SLOTSERVE_SRFORMER_HOST_DEVICE int64_t values() const { return capacity * width(); }
  SLOTSERVE_SRFORMER_HOST_DEVICE int64_t key_value() const { return 2 * capacity * width(); }
  SLOTSERVE_SRFORMER_HOST_DEVICE int64_t key_norm() const { return key_value() + square(); }
  SLOTSERVE_SRFORMER_HOST_DEVICE int64_t memory_floats() const { return key_norm() + heads; }
  // Offsets inside the RAF state.
  SLOTSERVE_SRFORMER_HOST_DEVICE int64_t membrane() const { return 0; }
  SLOTSERVE_SRFORMER_HOST_DEVICE int64_t raf_output() const { return square(); }
  SLOTSERVE_SRFORMER_HOST_DEVICE int64_t entered() const { return 2 * square(); }
  SLOTSERVE_SRFORMER_HOST_DEVICE int64_t raf_floats() const { return entered() + heads; }
};

// Build: copies the source's k rows of K and V into the layer's memory (rows past k zeroed)
// and writes KV and k_norm. The block's length is the caller's to store.
struct SrformerBuildParams {
  SrformerLayout layout;
  int positions = 0;  // k, 1..capacity
  const float* keys = nullptr;
  const float* values = nullptr;
  int64_t in_stride = 0;
  float* layer = nullptr;  // the layer's memory inside the request's cross memory block
};

// Step: `target` names the memory: row i reads block target.slots[i] of target.state (its
// length at length_offset from the block's start) at decoder position positions[i]; its RAF
// state is in slot raf_slots[i] of raf_state. Row i uses segment
// i = min(⌊t·m/q⌋, m−1), m = ⌈n/segment⌉; on entering a new segment it updates mem and R
// (P = KV − K_Sᵀ V_S; x = P Wᵀ + b row-wise; mem = leak·mem + x; y = mem/thre − 1;
// mem −= thre·[y>0]; R = relu(y)); out = softmax(K_S q/√d)ᵀ V_S + qᵀR / max(‖K‖_F, 1e-6).
struct SrformerStepParams {
  SrformerLayout layout;
  int rows = 0;
  int segment = 0;        // s
  int target_length = 0;  // q
  int64_t length_offset = 0;
  StateView raf_state;                 // the slots' RAF state of this layer
  const int32_t* raf_slots = nullptr;  // [rows], device memory
  const float* raf_weight = nullptr;   // [d x d] F32 (cross.raf_proj.weight), shared by heads
  const float* raf_bias = nullptr;     // [d]
  float leak = 0.0f;
  float threshold = 1.0f;
  const float* q = nullptr;
  int64_t q_stride = 0;
  float* out = nullptr;
  int64_t out_stride = 0;
};

template <Backend B>
void LaunchSrformerBuild(const SrformerBuildParams& params, Stream stream);
template <Backend B>
void LaunchSrformerStep(const SrformerStepParams& params, const StepTarget& target, Stream stream);

inline void LaunchSrformerBuild(Backend backend, const SrformerBuildParams& params,
                                Stream stream = nullptr) {
  Dispatch(backend, "srformer_build",
           [&](auto tag) { LaunchSrformerBuild<decltype(tag)::value>(params, stream); });
}
inline void LaunchSrformerStep(Backend backend, const SrformerStepParams& params,
                               const StepTarget& target, Stream stream = nullptr) {
  Dispatch(backend, "srformer_step",
           [&](auto tag) { LaunchSrformerStep<decltype(tag)::value>(params, target, stream); });
}

// The segment decoder position t reads: min(⌊t·m/q⌋, m−1) with m = ⌈n/segment⌉.
#ifdef __CUDACC__
__host__ __device__
#endif
    inline int
    SrformerSegmentOf(int position, int source_length, int segment, int target_length) {
  const int count = (source_length + segment - 1) / segment;
  const int64_t index = static_cast<int64_t>(position) * count / target_length;
  return static_cast<int>(index < count - 1 ? index : count - 1);
}

}  // namespace slotserve::kernels
