// One attention read per (request, head) pair over that request's own rows — scores = K q,
// softmax, out = P V — for a step's pairs in order, each pair prefetching the next pair's rows
// while it reads its own (row_products.h's companion rows, into L2). The softmax KV-cache step
// and the encoder–decoder cross-memory read are this loop; they differ only in where a pair's
// rows are. At batch 64 the reads restarted cold at every pair before the prefetch: the softmax
// step's attention read its cache at a third of the core's streaming rate
// (bench/results/attention_companion_prefetch.md).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/cpu/row_products.h"
#include "kernels/cpu/vector_ops.h"

namespace slotserve::kernels::cpu {

// One (request, head) pair: its query, its output, and its rows (stride: the caller's width).
template <typename Element>
struct HeadRead {
  const float* q;
  float* out;
  const Element* keys;    // row 0 of this head's keys
  const Element* values;  // row 0 of this head's values
  int rows;
};

// A pair's keys and values take at most this many bytes for the pair before it to prefetch them
// into L2. Beyond it, the pair is read with each loop prefetching its own rows ahead: L2 (1 MiB
// on Zen 4, 256 KiB on older cores) could not hold the next pair's rows beside the current one's.
inline constexpr int64_t kCompanionPrefetchBytes = 128 * 1024;

template <typename Element>
bool CompanionPrefetchFits(const HeadRead<Element>& pair, int d) {
  return int64_t{2} * pair.rows * d * static_cast<int64_t>(sizeof(Element)) <=
         kCompanionPrefetchBytes;
}

// out = softmax((keys . q) * scale) values over the pair's rows. next, when given, is the pair
// read after this one: its rows are prefetched alongside. prefetched_by_previous: the pair before
// this one prefetched its rows; otherwise (the first pair of a range, or after a pair too long to
// prefetch) its loops look ahead over their own rows too.
template <typename Element>
void AttendOneHead(const HeadRead<Element>& pair, bool prefetched_by_previous,
                   const HeadRead<Element>* next, int64_t width, int d, float scale,
                   std::vector<float>& scores) {
  RowPrefetch<Element> keys_prefetch, values_prefetch;
  if (next != nullptr && CompanionPrefetchFits(*next, d)) {
    keys_prefetch.companion = next->keys;
    values_prefetch.companion = next->values;
    keys_prefetch.companion_rows = values_prefetch.companion_rows = next->rows;
  }
  keys_prefetch.own_rows_ahead = values_prefetch.own_rows_ahead = !prefetched_by_previous;
  scores.resize(pair.rows);
  DotRows(pair.q, pair.keys, width, pair.rows, d, scores.data(), keys_prefetch);
  for (int s = 0; s < pair.rows; ++s) scores[s] *= scale;
  SoftmaxInPlace(scores.data(), pair.rows);
  WeightedRowSum(scores.data(), pair.values, width, pair.rows, d, pair.out, values_prefetch);
}

// Pairs [begin, end) in order, pair_read(pair) giving each one's HeadRead<Element>.
template <typename Element, typename PairRead>
void AttendPairs(int begin, int end, PairRead pair_read, int64_t width, int d, float scale) {
  if (begin >= end) return;
  std::vector<float> scores;
  HeadRead<Element> current = pair_read(begin);
  bool prefetched = false;  // the range's first pair starts cold
  for (int pair = begin; pair < end; ++pair) {
    if (pair + 1 < end) {
      const HeadRead<Element> next = pair_read(pair + 1);
      AttendOneHead(current, prefetched, &next, width, d, scale, scores);
      prefetched = CompanionPrefetchFits(next, d);
      current = next;
    } else {
      AttendOneHead<Element>(current, prefetched, nullptr, width, d, scale, scores);
    }
  }
}

}  // namespace slotserve::kernels::cpu
