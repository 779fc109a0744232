#include "server/http/best_of.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <utility>

namespace slotserve::server::http {

double LogprobPerToken(const ChoiceOutput& choice) {
  const std::vector<engine::GeneratedTokenLogprobs>& logprobs = choice.tokens.logprobs;
  if (logprobs.empty()) return -std::numeric_limits<double>::infinity();
  double sum = 0.0;
  for (const engine::GeneratedTokenLogprobs& token : logprobs) sum += token.chosen.logprob;
  return sum / static_cast<double>(logprobs.size());
}

std::vector<ChoiceOutput> KeepBestChoices(std::vector<ChoiceOutput> choices, int64_t best_of,
                                          int64_t keep) {
  std::map<int64_t, std::vector<ChoiceOutput>> by_prompt;
  for (ChoiceOutput& choice : choices) {
    by_prompt[choice.finished.choice_index / best_of].push_back(std::move(choice));
  }
  std::vector<ChoiceOutput> kept;
  for (auto& [prompt, candidates] : by_prompt) {
    std::optional<std::vector<engine::GeneratedTokenLogprobs>> prompt_scores;
    for (ChoiceOutput& candidate : candidates) {
      if (candidate.tokens.prompt_logprobs.has_value()) {
        prompt_scores = std::move(candidate.tokens.prompt_logprobs);
        candidate.tokens.prompt_logprobs.reset();
      }
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const ChoiceOutput& a, const ChoiceOutput& b) {
                       const double pa = LogprobPerToken(a);
                       const double pb = LogprobPerToken(b);
                       if (pa != pb) return pa > pb;
                       return a.finished.choice_index < b.finished.choice_index;
                     });
    candidates.resize(std::min<size_t>(candidates.size(), static_cast<size_t>(keep)));
    for (size_t rank = 0; rank < candidates.size(); ++rank) {
      ChoiceOutput& choice = candidates[rank];
      choice.finished.choice_index = static_cast<int32_t>(prompt * keep + rank);
      choice.tokens.choice_index = choice.finished.choice_index;
      if (rank == 0) choice.tokens.prompt_logprobs = std::move(prompt_scores);
      kept.push_back(std::move(choice));
    }
  }
  return kept;
}

}  // namespace slotserve::server::http
