// --int8-activations through the real server over gRPC: the golden abc_int8 model served with
// and without the flag, one greedy token after each of 20 prompt lengths, with its logprob. With
// the flag, every logprob equals the one the PyTorch reference's int8-activation logits give
// (golden_logits_int8_activations.f32, computed independently of the engine); without it, the
// exact-weights logits' (golden_logits.f32), also when it is switched off by name
// (--noint8-activations); and the two servers' logprobs differ, so the flag
// reaches the engine.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include "tests/integration/golden_choices.h"
#include "tests/integration/golden_tokens.h"
#include "tests/integration/server_test.h"
#include "tests/integration/test_client.h"

namespace slotserve::testing {
namespace {

constexpr double kServerLogprobTolerance = 1e-4;

class Int8ActivationsServerTest : public ServerTest {
 protected:
  const std::filesystem::path dir_ =
      std::filesystem::path(SLOTSERVE_GOLDEN_MODELS_DIR) / "abc_int8";
};

TEST_F(Int8ActivationsServerTest, LogprobsFollowTheReferenceOfEachMode) {
  const Golden rounded = LoadGolden(dir_, "golden_logits_int8_activations.f32");
  const Golden exact = LoadGolden(dir_);

  StartServer({"--model=" + dir_.string(), "--max-slots=2", "--int8-activations"});
  const std::vector<GreedyChoice> with_flag = GreedyChoices(*stub_, rounded);
  ExpectReferenceChoices(with_flag, rounded, kServerLogprobTolerance, "--int8-activations");
  server_.reset();  // stops it

  // absl's negative spelling of a boolean flag, also given a value by NormalizeFlagSpelling.
  StartServer({"--model=" + dir_.string(), "--noint8-activations", "--max-slots=2"});
  const std::vector<GreedyChoice> without_flag = GreedyChoices(*stub_, exact);
  ExpectReferenceChoices(without_flag, exact, kServerLogprobTolerance, "exact weights");

  EXPECT_GT(LargestLogprobDifference(with_flag, without_flag), 10 * kServerLogprobTolerance)
      << "the flag changed no logprob";
}

}  // namespace
}  // namespace slotserve::testing
