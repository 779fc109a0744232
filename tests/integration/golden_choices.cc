#include "tests/integration/golden_choices.h"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>
#include "tests/integration/test_client.h"

namespace slotserve::testing {

std::vector<GreedyChoice> GreedyChoices(v1::SlotServe::Stub& stub, const Golden& golden) {
  std::vector<GreedyChoice> choices;
  for (size_t length = 3; length <= golden.tokens.size(); length += 3) {
    const std::vector<int32_t> prompt(golden.tokens.begin(), golden.tokens.begin() + length);
    v1::GenerateRequest request = SessionTurn(prompt, /*keep=*/false, /*handle=*/"", 1);
    request.mutable_logprobs()->set_enabled(true);
    const StreamResult result = Generate(stub, request);
    EXPECT_TRUE(result.status.ok()) << result.status.error_message();
    if (!result.status.ok()) return {};
    double logprob = NAN;
    for (const v1::GenerateResponse& message : result.messages) {
      if (message.has_tokens() && message.tokens().logprobs_size() > 0)
        logprob = message.tokens().logprobs(0).logprob();
    }
    EXPECT_EQ(result.ids.size(), 1u);
    if (result.ids.size() != 1) return {};
    choices.push_back({result.ids[0], logprob});
  }
  return choices;
}

double ReferenceLogprob(const Golden& golden, size_t row, int32_t id) {
  const float* logits = golden.logits.data() + row * golden.vocab;
  const double largest = *std::max_element(logits, logits + golden.vocab);
  double sum = 0.0;
  for (int v = 0; v < golden.vocab; ++v) sum += std::exp(logits[v] - largest);
  return logits[id] - largest - std::log(sum);
}

void ExpectReferenceChoices(const std::vector<GreedyChoice>& choices, const Golden& golden,
                            double tolerance, const std::string& what) {
  ASSERT_EQ(choices.size(), golden.tokens.size() / 3) << what;
  for (size_t i = 0; i < choices.size(); ++i) {
    const size_t row = 3 * (i + 1) - 1;
    EXPECT_EQ(choices[i].id, Argmax(golden, row)) << what << ", after " << row + 1;
    EXPECT_NEAR(choices[i].logprob, ReferenceLogprob(golden, row, choices[i].id), tolerance)
        << what << ", after " << row + 1 << " tokens";
  }
}

double LargestLogprobDifference(const std::vector<GreedyChoice>& a,
                                const std::vector<GreedyChoice>& b) {
  EXPECT_EQ(a.size(), b.size());
  double largest = 0.0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    largest = std::max(largest, std::abs(a[i].logprob - b[i].logprob));
  return largest;
}

}  // namespace slotserve::testing
