// Token selection: picks one token per row of logits where the logits are (the model's device),
// so that only token ids cross to the host. This is the engine's one selection rule: every
// generated token (each decode step's, and a prompt's first) goes through it, on every backend.
//
// Per row r, first the row's logit adjustments, applied in place (the logits are the step's
// scratch; a caller that needs the raw row copies it first). Ids outside [0, vocab) are ignored.
//   1. Penalties, for each of the row's penalised tokens {id, generated} (distinct ids: every id
//      in the request's prompt or generated so far; `generated` = how often it was generated):
//        repetition (CTRL / Hugging Face), when repetition_penalty[r] != 1:
//          logit = logit > 0 ? logit / repetition_penalty : logit * repetition_penalty
//        presence / frequency (OpenAI), when generated > 0:
//          logit -= presence_penalty + frequency_penalty * generated
//      in float, each product rounded on its own (never a fused multiply-add), so every
//      backend gives the same bits (PenalisedLogit below is that arithmetic, shared by all).
//   2. Biases (OpenAI's logit_bias), for each of the row's biased tokens {id, bias} (distinct
//      ids): logit += bias, one float addition.
//   3. Masks: each of the row's masked ids gets logit = -inf, so it cannot be picked (how
//      min_new_tokens keeps eos and stop tokens out).
// Then, with T = temperature[r]:
//   T == 0: argmax, lowest id on ties, NaN counting as -inf (id 0 when nothing is finite).
//   T > 0:  candidates are the finite logits; weight_i = exp((logit_i - max) / T). In rank
//           order (higher logit first, lower id on ties) keep the first top_k (0 = off), then
//           the shortest prefix of those whose weight reaches top_p of their total (1 = off),
//           then drop weights below min_p (0 = off; the heaviest weighs 1). With
//           u = UniformDraw(seeds[r], draw_index[r]) (kernels/counter_rng.h), the token is the
//           first kept id, walking ids upwards, whose cumulative weight exceeds u * total.
// The draw is a pure function of the row's own logits, options, adjustments, seed and index: a
// request gets the same token whatever else is in the batch. Backends agree exactly on the
// adjustments, on argmax and on top_k = 1; elsewhere float summation order may move a
// boundary by a rounding error.
// Backends: reference (sort the candidates, as written above), cpu (top-k and top-p from a
// histogram of the row's logits, ranking only the tokens up to where the kept ones end; no full
// sort), cuda (one block per row, no sort, no scratch, so it can follow a captured decode
// graph).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/backend.h"
#include "kernels/counter_rng.h"

namespace slotserve::kernels {

// A token the row's history penalises: `id` is in the request's prompt or generated tokens,
// and was generated `generated` times (0: prompt only).
struct PenalisedToken {
  int32_t id = 0;
  int32_t generated = 0;
};

// A token whose logit the request shifts by `bias` (OpenAI's logit_bias).
struct BiasedToken {
  int32_t id = 0;
  float bias = 0.0f;
};

struct SamplingParams {
  // [rows, logits_stride], the first `vocab` of each row used; adjusted in place (steps 1-3).
  float* logits = nullptr;
  int64_t logits_stride = 0;
  int rows = 0;
  int vocab = 0;
  // Per-row options, [rows] each, in the backend's device memory. top_k, top_p and min_p may
  // be null (off for every row).
  const float* temperature = nullptr;
  const int32_t* top_k = nullptr;
  const float* top_p = nullptr;
  const float* min_p = nullptr;
  const uint64_t* seeds = nullptr;
  const uint64_t* draw_index = nullptr;  // the draw's index in the row's stream
  // Per-row adjustments, in device memory; each may be null (none for any row). Penalties are
  // [rows] each; row r's penalised tokens are penalised[penalised_offsets[r] ..
  // penalised_offsets[r + 1]), its biased tokens biased[biased_offsets[r] ..
  // biased_offsets[r + 1]) and its masked ids masked[masked_offsets[r] ..
  // masked_offsets[r + 1]) (offsets [rows + 1]).
  const float* repetition_penalty = nullptr;
  const float* presence_penalty = nullptr;
  const float* frequency_penalty = nullptr;
  const int32_t* penalised_offsets = nullptr;
  const PenalisedToken* penalised = nullptr;
  const int32_t* biased_offsets = nullptr;
  const BiasedToken* biased = nullptr;
  const int32_t* masked_offsets = nullptr;
  const int32_t* masked = nullptr;
  int32_t* out_tokens = nullptr;  // [rows]
};

template <Backend B>
void LaunchSampling(const SamplingParams& params, Stream stream);

inline void LaunchSampling(Backend backend, const SamplingParams& params, Stream stream = nullptr) {
  Dispatch(backend, "sampling",
           [&](auto tag) { LaunchSampling<decltype(tag)::value>(params, stream); });
}

// a * b rounded on its own: never contracted with a following add into a fused multiply-add
// (compilers do that by default where the hardware has one, changing the last bit).
SLOTSERVE_HOST_DEVICE inline float UnfusedProduct(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  float product = a * b;
#if defined(__GNUC__) && defined(__x86_64__)
  __asm__("" : "+x"(product));  // an opaque value: nothing can fuse into it
#endif
  return product;
#endif
}

// Step 1 of the rule for one logit.
SLOTSERVE_HOST_DEVICE inline float PenalisedLogit(float logit, PenalisedToken token,
                                                  float repetition_penalty, float presence_penalty,
                                                  float frequency_penalty) {
  if (repetition_penalty != 1.0f) {
    logit = logit > 0.0f ? logit / repetition_penalty : UnfusedProduct(logit, repetition_penalty);
  }
  if (token.generated > 0) {
    logit -=
        presence_penalty + UnfusedProduct(frequency_penalty, static_cast<float>(token.generated));
  }
  return logit;
}

// The probabilities the cpu backend draws a row from (after its adjustments), zero outside
// the kept set; empty when temperature is 0 (greedy). For tests and diagnostics.
std::vector<double> SamplingDistribution(std::span<const float> logits, float temperature,
                                         int32_t top_k, float top_p, float min_p);

}  // namespace slotserve::kernels
