// --int8-activations through the real server over gRPC: the golden abc_int8 model served with
// and without the flag, one greedy token after each of 20 prompt lengths, with its logprob. With
// the flag, every logprob equals the one the PyTorch reference's int8-activation logits give
// (golden_logits_int8_activations.f32, computed independently of the engine); without it, the
// exact-weights logits' (golden_logits.f32), also when it is switched off by name
// (--noint8-activations); and the two servers' logprobs differ, so the flag
// reaches the engine.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include "tests/integration/golden_tokens.h"
#include "tests/integration/server_test.h"
#include "tests/integration/test_client.h"

namespace slotserve::testing {
namespace {

constexpr double kTolerance = 1e-4;

// log softmax of row `row` at `id`, in double.
double ReferenceLogprob(const Golden& golden, size_t row, int32_t id) {
  const float* logits = golden.logits.data() + row * golden.vocab;
  const double largest = *std::max_element(logits, logits + golden.vocab);
  double sum = 0.0;
  for (int v = 0; v < golden.vocab; ++v) sum += std::exp(logits[v] - largest);
  return logits[id] - largest - std::log(sum);
}

class Int8ActivationsServerTest : public ServerTest {
 protected:
  struct Choice {
    int32_t id;
    double logprob;
  };

  // The greedy token after each prompt length, with its logprob, from the server now running.
  std::vector<Choice> GreedyChoices(const Golden& golden) {
    std::vector<Choice> choices;
    for (size_t length = 3; length <= golden.tokens.size(); length += 3) {
      const std::vector<int32_t> prompt(golden.tokens.begin(), golden.tokens.begin() + length);
      v1::GenerateRequest request = SessionTurn(prompt, /*keep=*/false, /*handle=*/"", 1);
      request.mutable_logprobs()->set_enabled(true);
      const StreamResult result = Generate(*stub_, request);
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

  void ExpectReference(const std::vector<Choice>& choices, const Golden& golden,
                       const std::string& what) {
    ASSERT_EQ(choices.size(), golden.tokens.size() / 3) << what;
    for (size_t i = 0; i < choices.size(); ++i) {
      const size_t row = 3 * (i + 1) - 1;
      EXPECT_EQ(choices[i].id, Argmax(golden, row)) << what << ", after " << row + 1;
      EXPECT_NEAR(choices[i].logprob, ReferenceLogprob(golden, row, choices[i].id), kTolerance)
          << what << ", after " << row + 1 << " tokens";
    }
  }

  const std::filesystem::path dir_ =
      std::filesystem::path(SLOTSERVE_GOLDEN_MODELS_DIR) / "abc_int8";
};

TEST_F(Int8ActivationsServerTest, LogprobsFollowTheReferenceOfEachMode) {
  const Golden rounded = LoadGolden(dir_, "golden_logits_int8_activations.f32");
  const Golden exact = LoadGolden(dir_);

  StartServer({"--model=" + dir_.string(), "--max-slots=2", "--int8-activations"});
  const std::vector<Choice> with_flag = GreedyChoices(rounded);
  ExpectReference(with_flag, rounded, "--int8-activations");
  server_.reset();  // stops it

  // absl's negative spelling of a boolean flag, also given a value by NormalizeFlagSpelling.
  StartServer({"--model=" + dir_.string(), "--noint8-activations", "--max-slots=2"});
  const std::vector<Choice> without_flag = GreedyChoices(exact);
  ExpectReference(without_flag, exact, "exact weights");

  ASSERT_EQ(with_flag.size(), without_flag.size());
  double largest = 0.0;
  for (size_t i = 0; i < with_flag.size(); ++i)
    largest = std::max(largest, std::abs(with_flag[i].logprob - without_flag[i].logprob));
  EXPECT_GT(largest, 10 * kTolerance) << "the flag changed no logprob";
}

}  // namespace
}  // namespace slotserve::testing
