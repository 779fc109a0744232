// A golden model served by the real server, read one greedy token at a time: after each of the
// golden sequence's prompt lengths 3, 6, 9, ..., the token and its logprob, checked against the
// reference's logits (tests/golden/README.md). Shared by the tests of flags that change the
// arithmetic (--int8-activations, --kv-cache-dtype), each against its own reference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "slotserve/v1/slotserve.grpc.pb.h"
#include "tests/integration/golden_tokens.h"

namespace slotserve::testing {

struct GreedyChoice {
  int32_t id;
  double logprob;
};

// The server's greedy token after each prompt length, with its logprob (empty after a
// failure, which is reported).
std::vector<GreedyChoice> GreedyChoices(v1::SlotServe::Stub& stub, const Golden& golden);

// log softmax of the reference's row `row` at `id`, in double.
double ReferenceLogprob(const Golden& golden, size_t row, int32_t id);

// Each choice is the reference's argmax, with its logprob within `tolerance`.
void ExpectReferenceChoices(const std::vector<GreedyChoice>& choices, const Golden& golden,
                            double tolerance, const std::string& what);

// The largest |logprob difference| between two servers' choices of the same sequence.
double LargestLogprobDifference(const std::vector<GreedyChoice>& a,
                                const std::vector<GreedyChoice>& b);

}  // namespace slotserve::testing
