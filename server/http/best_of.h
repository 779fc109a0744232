// OpenAI's best_of > n on the completions API: best_of choices of each prompt are generated
// (forked from one prefill, as n > 1), and the n with the highest log probability per token
// are returned, best first, as OpenAI describes it. A choice's log probability per token is
// the mean of its tokens' (the model's raw distribution, engine/token_logprobs.h); one with no
// token ranks last; ties keep the lower index. Streaming is refused beside it (the best are
// known only at the end).
#pragma once

#include <cstdint>
#include <vector>

#include "server/http/openai_response.h"

namespace slotserve::server::http {

// `choices`: every choice of every prompt, prompt p's at indexes p * best_of .. (in any
// order). Returns each prompt's `keep` best, prompt p's renumbered p * keep + rank, in index
// order. An echo's prompt scores, which arrive with one choice of the prompt, go with the
// prompt's best.
std::vector<ChoiceOutput> KeepBestChoices(std::vector<ChoiceOutput> choices, int64_t best_of,
                                          int64_t keep);

// Mean log probability of the choice's tokens; -infinity when it has none.
double LogprobPerToken(const ChoiceOutput& choice);

}  // namespace slotserve::server::http
