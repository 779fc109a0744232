// best_of's ranking (server/http/best_of.h): each prompt's choices ordered by their mean token
// log probability, computed here from the logprobs the test gives them, the best kept and
// renumbered, ties to the lower index, an echo's prompt scores moved to the prompt's best.
#include "server/http/best_of.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace slotserve::server::http {
namespace {

// Choice `index` with one token per logprob.
ChoiceOutput Candidate(int32_t index, const std::vector<float>& logprobs) {
  ChoiceOutput choice;
  choice.finished.choice_index = index;
  choice.tokens.choice_index = index;
  choice.tokens.text = "choice " + std::to_string(index);
  for (float logprob : logprobs) {
    engine::GeneratedTokenLogprobs token;
    token.chosen = {static_cast<int32_t>(logprobs.size()), logprob};
    choice.tokens.logprobs.push_back(token);
  }
  choice.finished.generated_tokens = static_cast<int64_t>(logprobs.size());
  return choice;
}

TEST(BestOfTest, EachPromptKeepsItsBestPerTokenRenumbered) {
  // Two prompts, best_of 3, keep 2. Means: prompt 0: -1.0, -0.5, -2.0 (a longer choice with a
  // lower sum wins on the mean); prompt 1: -0.25, -0.25 (a tie), no tokens.
  std::vector<ChoiceOutput> choices = {
      Candidate(5, {}),      Candidate(0, {-1.0f}),       Candidate(1, {-0.5f, -0.5f, -0.5f}),
      Candidate(2, {-2.0f}), Candidate(4, {-0.5f, 0.0f}), Candidate(3, {-0.25f})};
  const std::vector<ChoiceOutput> kept = KeepBestChoices(choices, 3, 2);
  ASSERT_EQ(kept.size(), 4u);
  EXPECT_EQ(kept[0].tokens.text, "choice 1");
  EXPECT_EQ(kept[1].tokens.text, "choice 0");
  EXPECT_EQ(kept[2].tokens.text, "choice 3") << "a tie keeps the lower index first";
  EXPECT_EQ(kept[3].tokens.text, "choice 4");
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(kept[i].finished.choice_index, i);
    EXPECT_EQ(kept[i].tokens.choice_index, i);
  }
  EXPECT_DOUBLE_EQ(LogprobPerToken(kept[0]), -0.5);
  EXPECT_TRUE(std::isinf(LogprobPerToken(choices[0])));
}

TEST(BestOfTest, ThePromptsScoresGoWithItsBest) {
  std::vector<ChoiceOutput> choices = {Candidate(0, {-3.0f}), Candidate(1, {-1.0f})};
  choices[0].tokens.prompt_logprobs.emplace(1);  // the engine sends them with choice 0
  const std::vector<ChoiceOutput> kept = KeepBestChoices(choices, 2, 1);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].tokens.text, "choice 1");
  ASSERT_TRUE(kept[0].tokens.prompt_logprobs.has_value());
  EXPECT_EQ(kept[0].tokens.prompt_logprobs->size(), 1u);
}

}  // namespace
}  // namespace slotserve::server::http
