// Beam search's rules (docs/ARCHITECTURE.md "Beam search"), as pure logic
// over log-probability rows and slot numbers: no model, no arena, no threads. The engine
// (beam_request.h) feeds it each step's rows, applies the copies it plans to the state arena and
// returns the slots it lets go to the pool; the unit tests check every rule by hand
// (tests/unit/engine/beam_search_test.cc).
//
// The search, for a request holding `width` slots:
//   - It starts from one live hypothesis (empty, in slots[0], which holds the prompt's state);
//     the other slots are spare. The first Advance takes the prompt's last row.
//   - Each Advance takes one log-softmax row per live hypothesis and ranks every (hypothesis,
//     token) pair by logprob_sum + row[token] (ties: the earlier hypothesis in live() order,
//     then the lower token id; tokens with a non-finite logprob, and eos / stop tokens before
//     min_length, are never picked). The best `width - finished` pairs are kept: that is, a
//     finished hypothesis keeps its place in the beam, and the live beam shrinks.
//   - A kept pair whose token is one of eos_ids, a stop token, or reaches max_length
//     tokens finishes (in that order of reasons); its score is logprob_sum / length^
//     length_penalty. The rest are the new live hypotheses, in rank order.
//   - Copy plan: a parent's first surviving child stays in the parent's slot (no copy); each
//     further child is copied from the parent's slot into a free slot (a spare one, or one of a
//     parent without children). Sources are only slots of parents with children, which keep
//     their state, and destinations never are: the copies may run in any order. Slots left
//     over are released at once.
//   - Termination: the search is done when no hypothesis is live, or when n_best hypotheses
//     have finished and no live one can still beat the worst of the n_best best: a live
//     hypothesis's sum only falls, so its best reachable score is sum / max_length^lp for a
//     length penalty lp > 0 and sum / (length + 1)^lp for lp <= 0 (never a heuristic cut).
//     Live hypotheses are then dropped and their slots released.
// Width 1 is exactly greedy decoding (the argmax of the row, lower id on ties, with the same
// masks and endings as a greedy request).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/generation_events.h"

namespace slotserve::engine {

struct BeamSearchOptions {
  int width = 1;
  int n_best = 1;  // in [1, width]
  double length_penalty = 0.0;
  int max_length = 1;  // a hypothesis reaching this many tokens ends (kLength); >= 1
  int min_length = 0;  // before this many tokens, eos and stop tokens cannot be picked
  // The ids that end a hypothesis as eos (the model's, generation_config.json's, the
  // tokenizer's); empty: no eos ending (the model has none, or ignore_eos).
  std::vector<int32_t> eos_ids;
  std::vector<int32_t> stop_token_ids;
};

// dst becomes a copy of src's state.
struct BeamCopy {
  int src = 0;
  int dst = 0;
  bool operator==(const BeamCopy&) const = default;
};

// What one Advance asks of the caller before the next rows are computed.
struct BeamStepPlan {
  std::vector<BeamCopy> copies;  // no dst is any copy's src: any order is safe
  std::vector<int> released;     // slots the search holds no longer
};

class BeamSearch {
 public:
  struct Hypothesis {
    std::vector<int32_t> ids;
    double logprob_sum = 0.0;
    int slot = -1;
  };

  // `slots` (width of them, distinct): slots[0] holds the prompt's state, the rest are spare.
  BeamSearch(BeamSearchOptions options, std::vector<int> slots);

  // One step. `logprob_rows` is [live().size(), vocab]: row i is the log-softmax over the next
  // token of live()[i] (the first step: the prompt's last position). Must not be done().
  BeamStepPlan Advance(std::span<const double> logprob_rows, int vocab);

  // The live hypotheses, best first; after the first Advance each one's next input is
  // ids.back(), to be fed in its slot.
  std::span<const Hypothesis> live() const { return live_; }
  bool started() const { return started_; }
  bool done() const { return done_; }
  // Every slot the search still holds (live and spare).
  std::vector<int> held_slots() const;
  // The n_best best finished hypotheses (fewer while fewer finished), by score descending,
  // the earlier finished first on ties; text is left empty.
  std::vector<BeamHypothesis> Best() const;

  // logprob_sum / length^length_penalty.
  static double Score(double logprob_sum, int length, double length_penalty);

 private:
  struct Candidate {
    double logprob_sum = 0.0;
    int parent = 0;
    int32_t token = 0;
  };
  std::vector<Candidate> RankCandidates(std::span<const double> rows, int vocab, int keep) const;
  bool IsEosToken(int32_t token) const;
  bool IsEndToken(int32_t token) const;  // eos or a stop token
  // The best score any descendant of `live` could reach.
  double ScoreBound(const Hypothesis& live) const;
  bool NoLiveCanImprove() const;

  BeamSearchOptions options_;
  std::vector<Hypothesis> live_;
  std::vector<int> spare_slots_;
  std::vector<BeamHypothesis> finished_;  // in finishing order
  bool started_ = false;
  bool done_ = false;
};

}  // namespace slotserve::engine
