// Top-k and top-p truncation of a sampled row on the cpu backend, without sorting the
// vocabulary. Sorting the tokens that could reach a top-p nucleus cost 50-120 µs a row at
// vocabulary 4,000 (top-p 0.9-0.95), where the nucleus itself was 60-400 tokens, and top-k's
// partial selection over every candidate ~40 µs. Here one vectorised pass buckets the tokens by
// logit, and a histogram of the buckets' weights (top-p) or counts (top-k), heaviest bucket
// first, shows roughly where the kept tokens end; only the tokens up to that bucket are ranked.
// The walk that decides the nucleus is the exact one of the sampling rule (kernels/sampling.h),
// so the tokens kept are a full sort's, bit for bit; when rounding leaves the boundary beyond
// the bucket, the full sort runs instead. Top-k needs no weights at all, so the sampler
// computes them only for the k tokens it keeps.
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

// The first top_k finite tokens of a row in rank order (every finite token when fewer), into
// `ids` in id order. top_k > 0; max_logit: the largest finite logit (MaxFinite), temperature > 0
// (they set the buckets' scale).
void TopKIds(std::span<const float> logits, float max_logit, float temperature, int32_t top_k,
             std::vector<int32_t>& ids);

// The top-p nucleus of a row, into `ids` in id order: the shortest prefix, in rank order, of
// the row's finite tokens whose weights, added in rank order, reach top_p * weight_total.
// Ranking skips the tokens lighter than (1 - top_p) * weight_total / (2 * finite tokens), which
// together weigh too little to be reached; when rounding leaves no prefix reaching the target,
// every token at least that heavy. Empty when no logit is finite. After top-k, call it on the
// kept tokens alone, in id order.
//   weights: the row's sampling weights (SamplingWeightsAndCumulative), 0 where the logit is not
//   finite; weight_total: every weight added in id order; max_logit: the largest finite logit
//   (MaxFinite); temperature > 0; 0 < top_p < 1.
void TopPIds(std::span<const float> logits, std::span<const double> weights, float max_logit,
             double weight_total, float temperature, float top_p, std::vector<int32_t>& ids);

}  // namespace slotserve::kernels::cpu
