#include "engine/beam_search.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <utility>

namespace slotserve::engine {

BeamSearch::BeamSearch(BeamSearchOptions options, std::vector<int> slots)
    : options_(std::move(options)) {
  Hypothesis root;
  root.slot = slots.empty() ? -1 : slots.front();
  live_.push_back(std::move(root));
  if (!slots.empty()) spare_slots_.assign(slots.begin() + 1, slots.end());
}

double BeamSearch::Score(double logprob_sum, int length, double length_penalty) {
  if (length_penalty == 0.0) return logprob_sum;
  return logprob_sum / std::pow(static_cast<double>(length), length_penalty);
}

bool BeamSearch::IsEosToken(int32_t token) const {
  return std::find(options_.eos_ids.begin(), options_.eos_ids.end(), token) !=
         options_.eos_ids.end();
}

bool BeamSearch::IsEndToken(int32_t token) const {
  if (IsEosToken(token)) return true;
  return std::find(options_.stop_token_ids.begin(), options_.stop_token_ids.end(), token) !=
         options_.stop_token_ids.end();
}

std::vector<BeamSearch::Candidate> BeamSearch::RankCandidates(std::span<const double> rows,
                                                              int vocab, int keep) const {
  auto better = [](const Candidate& a, const Candidate& b) {
    if (a.logprob_sum != b.logprob_sum) return a.logprob_sum > b.logprob_sum;
    if (a.parent != b.parent) return a.parent < b.parent;
    return a.token < b.token;
  };
  std::vector<Candidate> ranked;
  std::vector<Candidate> row_candidates;
  for (size_t parent = 0; parent < live_.size(); ++parent) {
    const Hypothesis& hypothesis = live_[parent];
    const std::span<const double> row = rows.subspan(parent * vocab, vocab);
    // Before min_length an ending token cannot be picked (as a greedy request masks it).
    const bool ending_masked = static_cast<int>(hypothesis.ids.size()) < options_.min_length;
    row_candidates.clear();
    for (int32_t token = 0; token < vocab; ++token) {
      if (!std::isfinite(row[token]) || (ending_masked && IsEndToken(token))) continue;
      row_candidates.push_back(
          {hypothesis.logprob_sum + row[token], static_cast<int>(parent), token});
    }
    // Only a row's own best `keep` can be among the best `keep` overall.
    const size_t row_keep = std::min<size_t>(keep, row_candidates.size());
    std::partial_sort(row_candidates.begin(), row_candidates.begin() + row_keep,
                      row_candidates.end(), better);
    ranked.insert(ranked.end(), row_candidates.begin(), row_candidates.begin() + row_keep);
  }
  const size_t kept = std::min<size_t>(keep, ranked.size());
  std::partial_sort(ranked.begin(), ranked.begin() + kept, ranked.end(), better);
  ranked.resize(kept);
  return ranked;
}

BeamStepPlan BeamSearch::Advance(std::span<const double> logprob_rows, int vocab) {
  BeamStepPlan plan;
  if (done_) return plan;
  started_ = true;
  const int keep = options_.width - static_cast<int>(finished_.size());
  const std::vector<Candidate> kept = RankCandidates(logprob_rows, vocab, keep);

  // Each kept pair either finishes or becomes a live child of its parent.
  std::vector<Hypothesis> children;
  std::vector<int> child_parent;
  for (const Candidate& candidate : kept) {
    const Hypothesis& parent = live_[candidate.parent];
    std::vector<int32_t> ids = parent.ids;
    ids.push_back(candidate.token);
    const int length = static_cast<int>(ids.size());
    std::optional<FinishReason> reason;
    if (IsEosToken(candidate.token)) {
      reason = FinishReason::kEos;
    } else if (IsEndToken(candidate.token)) {
      reason = FinishReason::kStopToken;
    } else if (length >= options_.max_length) {
      reason = FinishReason::kLength;
    }
    if (reason) {
      finished_.push_back({.ids = std::move(ids),
                           .text = {},
                           .score = Score(candidate.logprob_sum, length, options_.length_penalty),
                           .logprob_sum = candidate.logprob_sum,
                           .reason = *reason});
    } else {
      children.push_back({.ids = std::move(ids), .logprob_sum = candidate.logprob_sum});
      child_parent.push_back(candidate.parent);
    }
  }

  std::vector<Hypothesis> parents = std::move(live_);
  live_ = std::move(children);
  done_ = live_.empty() || NoLiveCanImprove();
  if (done_) {
    for (const Hypothesis& parent : parents) plan.released.push_back(parent.slot);
    plan.released.insert(plan.released.end(), spare_slots_.begin(), spare_slots_.end());
    spare_slots_.clear();
    live_.clear();
    return plan;
  }

  // The copy plan: a parent's first child keeps its slot, the rest take free ones.
  std::vector<bool> parent_slot_taken(parents.size(), false);
  std::vector<int> free_slots = std::move(spare_slots_);
  spare_slots_.clear();
  for (size_t i = 0; i < live_.size(); ++i) {
    if (!parent_slot_taken[child_parent[i]]) {
      parent_slot_taken[child_parent[i]] = true;
      live_[i].slot = parents[child_parent[i]].slot;
    }
  }
  for (size_t p = 0; p < parents.size(); ++p) {
    if (!parent_slot_taken[p]) free_slots.push_back(parents[p].slot);
  }
  // Lowest slot first, so the plan does not depend on the order slots were freed in.
  std::sort(free_slots.begin(), free_slots.end(), std::greater<>());
  for (size_t i = 0; i < live_.size(); ++i) {
    if (live_[i].slot >= 0) continue;
    live_[i].slot = free_slots.back();
    free_slots.pop_back();
    plan.copies.push_back({.src = parents[child_parent[i]].slot, .dst = live_[i].slot});
  }
  plan.released = std::move(free_slots);
  std::sort(plan.released.begin(), plan.released.end());
  return plan;
}

double BeamSearch::ScoreBound(const Hypothesis& live) const {
  // The sum only falls from here, and the final length is in [length + 1, max_length].
  const double penalty = options_.length_penalty;
  const int length = penalty > 0.0 ? options_.max_length : static_cast<int>(live.ids.size()) + 1;
  return Score(live.logprob_sum, length, penalty);
}

bool BeamSearch::NoLiveCanImprove() const {
  if (static_cast<int>(finished_.size()) < options_.n_best) return false;
  std::vector<double> scores;
  for (const BeamHypothesis& finished : finished_) scores.push_back(finished.score);
  std::nth_element(scores.begin(), scores.begin() + (options_.n_best - 1), scores.end(),
                   std::greater<>());
  const double worst_kept = scores[options_.n_best - 1];
  return std::all_of(live_.begin(), live_.end(),
                     [&](const Hypothesis& live) { return ScoreBound(live) <= worst_kept; });
}

std::vector<int> BeamSearch::held_slots() const {
  std::vector<int> slots;
  for (const Hypothesis& live : live_) slots.push_back(live.slot);
  slots.insert(slots.end(), spare_slots_.begin(), spare_slots_.end());
  return slots;
}

std::vector<BeamHypothesis> BeamSearch::Best() const {
  std::vector<BeamHypothesis> best = finished_;
  std::stable_sort(best.begin(), best.end(), [](const BeamHypothesis& a, const BeamHypothesis& b) {
    return a.score > b.score;
  });
  if (static_cast<int>(best.size()) > options_.n_best) best.resize(options_.n_best);
  return best;
}

}  // namespace slotserve::engine
