// The logprobs a client may ask for (LogprobOptions), from a row's raw logits, which the model
// call copies back for just the rows that ask (LanguageModel::StepAndSample says why there).
#pragma once

#include <cstdint>
#include <span>

#include "engine/generation_events.h"

namespace slotserve::engine {

// log-softmax of the raw logits at `chosen` (in double; -inf for a non-finite logit), plus the
// `top_n` most likely ids (descending, lower id first on ties, NaN counting as -inf).
GeneratedTokenLogprobs ComputeLogprobs(std::span<const float> raw_logits, int32_t chosen,
                                       int top_n);

// The log-softmax of a row of raw logits, in double (a non-finite logit gives -inf): beam
// search's scores (beam_request.h). `out` has the row's size.
void LogSoftmax(std::span<const float> raw_logits, std::span<double> out);

}  // namespace slotserve::engine
