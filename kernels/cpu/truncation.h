// Top-k and top-p truncation of a sampled row on the cpu backend, without sorting the
// vocabulary. Sorting the tokens that could reach a top-p nucleus cost 50-120 µs a row at
// vocabulary 4,000 (top-p 0.9-0.95), where the nucleus itself was 60-400 tokens, and top-k's
// partial selection over every candidate ~40 µs. Here one vectorised pass buckets the tokens by
// logit, and a histogram of the buckets' weights (top-p) or counts (top-k), heaviest bucket
// first, shows roughly where the kept tokens end; only the tokens up to that bucket are ranked.
// The walk that decides the nucleus is the exact one of the sampling rule (kernels/sampling.h),
// so the tokens kept are a full sort's, bit for bit; when rounding leaves the boundary beyond
// the bucket, the full sort runs instead.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace slotserve::kernels::cpu {

// The rank order of the sampling rule (higher logit first, lower id on ties) as one integer,
// smallest first: a finite logit's bits mapped so that unsigned order is float order (-0
// taken as +0, which compares equal), complemented for higher first, then the id. Sorting
// these is several times faster than sorting candidates through a comparator.
uint64_t RankKey(float logit, int32_t id);

// The tokens a row keeps under top-k then top-p, into `ids` in id order:
//   - top_k > 0: the top_k first finite tokens in rank order (all of them when fewer);
//   - then, top_p < 1: the shortest rank-order prefix of those whose weights, added in rank
//     order, reach top_p * total, where total is their weights added in id order. Ranking
//     skips the tokens lighter than (1 - top_p) * total / (2 * their count), which together
//     weigh too little to be reached; when rounding leaves no prefix reaching the target,
//     every token at least that heavy.
// Empty when no logit is finite.
//   weights: the row's sampling weights (SamplingWeights), 0 where the logit is not finite;
//   max_logit: the largest finite logit (MaxFinite); temperature > 0; 0 < top_p <= 1.
void TruncatedIds(std::span<const float> logits, std::span<const double> weights, float max_logit,
                  float temperature, int32_t top_k, float top_p, std::vector<int32_t>& ids);

}  // namespace slotserve::kernels::cpu
