// engine/beam_search.h's rules on hand-made rows: ranking and ties, the copy plan (in-place
// first child, copies into spare or freed slots, no source overwritten), endings and scores,
// slot release, and the termination rule. Expected values are worked out by hand in the
// comments from the rows' probabilities.
#include "engine/beam_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace slotserve::engine {
namespace {

using Copies = std::vector<BeamCopy>;
using Slots = std::vector<int>;

Slots Sorted(Slots slots) {
  std::sort(slots.begin(), slots.end());
  return slots;
}

constexpr int kVocab = 4;
constexpr int32_t kEos = 3;

// Rows of log-probabilities from rows of probabilities.
std::vector<double> LogRows(std::vector<std::vector<double>> probabilities) {
  std::vector<double> rows;
  for (const auto& row : probabilities) {
    for (double p : row) rows.push_back(std::log(p));
  }
  return rows;
}

std::vector<int32_t> Ids(const BeamSearch& search, size_t i) { return search.live()[i].ids; }

// No copy's destination is any copy's source: the copies can run in any order.
void ExpectNoSourceOverwritten(const BeamStepPlan& plan) {
  for (const BeamCopy& a : plan.copies) {
    for (const BeamCopy& b : plan.copies) EXPECT_NE(a.dst, b.src);
  }
}

BeamSearchOptions Options(int width, int n_best, double length_penalty, int max_length) {
  return {.width = width,
          .n_best = n_best,
          .length_penalty = length_penalty,
          .max_length = max_length,
          .eos_ids = {kEos},
          .stop_token_ids = {}};
}

TEST(BeamSearchTest, WidthOneIsArgmaxWithTheLowerIdOnTies) {
  BeamSearch search(Options(1, 1, 0.0, 5), {7});
  EXPECT_FALSE(search.started());
  // 1 and 2 tie: the lower id wins, as greedy decoding picks.
  BeamStepPlan plan = search.Advance(LogRows({{0.1, 0.4, 0.4, 0.1}}), kVocab);
  EXPECT_TRUE(plan.copies.empty());
  EXPECT_TRUE(plan.released.empty());
  ASSERT_EQ(search.live().size(), 1u);
  EXPECT_EQ(Ids(search, 0), (std::vector<int32_t>{1}));
  EXPECT_EQ(search.live()[0].slot, 7);
  plan = search.Advance(LogRows({{0.2, 0.1, 0.3, 0.4}}), kVocab);
  EXPECT_TRUE(search.done());  // eos is the argmax
  EXPECT_EQ(Sorted(plan.released), (Slots{7}));
  const std::vector<BeamHypothesis> best = search.Best();
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].ids, (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(best[0].reason, FinishReason::kEos);
  EXPECT_DOUBLE_EQ(best[0].logprob_sum, std::log(0.4) + std::log(0.4));
  EXPECT_DOUBLE_EQ(best[0].score, best[0].logprob_sum);  // length penalty 0: the plain sum
}

// Width 3, eos 3, length penalty 1, n_best 1, slots {10, 11, 12}.
//   step 1 (prompt row .1 .5 .3 .1): keep 1 (.5), 2 (.3), then 0 and eos tie at .1: 0.
//   step 2: [1] -> .6 .05 .3 .05, [2] -> .1 .1 .1 .7, [0] -> uniform .25:
//     [1,0] .30, [2,eos] .21 (finishes, score log(.21)/2), [1,2] .15. Live [1,0] in slot 10,
//     [1,2] copied 10 -> 11 (the lower free slot of the childless parents' 11 and 12); 12 goes.
//   step 3: [1,0] -> .1 .1 .1 .7, [1,2] -> .5 .2 .2 .1; keep 3 - 1 = 2:
//     [1,0,eos] .21 (score log(.21)/3 = -0.520), [1,2,0] .075 (live, stays in slot 11);
//     slot 10 goes. The live one's best reachable score is log(.075)/max_length.
class BeamSearchScenario : public ::testing::Test {
 protected:
  BeamSearch RunToStepThree(int max_length, BeamStepPlan* step3) {
    BeamSearch search(Options(3, 1, 1.0, max_length), {10, 11, 12});
    BeamStepPlan plan = search.Advance(LogRows({{0.1, 0.5, 0.3, 0.1}}), kVocab);
    EXPECT_EQ(search.live().size(), 3u);
    EXPECT_EQ(Ids(search, 0), (std::vector<int32_t>{1}));
    EXPECT_EQ(Ids(search, 1), (std::vector<int32_t>{2}));
    EXPECT_EQ(Ids(search, 2), (std::vector<int32_t>{0}));
    EXPECT_EQ(plan.copies, (Copies{{10, 11}, {10, 12}}));
    EXPECT_TRUE(plan.released.empty());

    plan = search.Advance(
        LogRows({{0.6, 0.05, 0.3, 0.05}, {0.1, 0.1, 0.1, 0.7}, {0.25, 0.25, 0.25, 0.25}}), kVocab);
    EXPECT_FALSE(search.done());
    EXPECT_EQ(search.live().size(), 2u);
    EXPECT_EQ(Ids(search, 0), (std::vector<int32_t>{1, 0}));
    EXPECT_EQ(search.live()[0].slot, 10);
    EXPECT_EQ(Ids(search, 1), (std::vector<int32_t>{1, 2}));
    EXPECT_EQ(search.live()[1].slot, 11);
    EXPECT_NEAR(search.live()[1].logprob_sum, std::log(0.15), 1e-12);
    EXPECT_EQ(plan.copies, (Copies{{10, 11}}));
    ExpectNoSourceOverwritten(plan);
    EXPECT_EQ(Sorted(plan.released), (Slots{12}));
    EXPECT_EQ(Sorted(search.held_slots()), (Slots{10, 11}));

    *step3 = search.Advance(LogRows({{0.1, 0.1, 0.1, 0.7}, {0.5, 0.2, 0.2, 0.1}}), kVocab);
    return search;
  }
};

TEST_F(BeamSearchScenario, ALiveHypothesisThatCanStillWinKeepsTheSearchGoing) {
  BeamStepPlan plan;
  BeamSearch search = RunToStepThree(10, &plan);
  // log(.075)/10 = -0.259 > log(.21)/3 = -0.520: the live one may still win.
  EXPECT_FALSE(search.done());
  ASSERT_EQ(search.live().size(), 1u);
  EXPECT_EQ(Ids(search, 0), (std::vector<int32_t>{1, 2, 0}));
  EXPECT_EQ(search.live()[0].slot, 11);
  EXPECT_TRUE(plan.copies.empty());
  EXPECT_EQ(Sorted(plan.released), (Slots{10}));
  const std::vector<BeamHypothesis> best = search.Best();
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].ids, (std::vector<int32_t>{1, 0, 3}));
  EXPECT_NEAR(best[0].score, std::log(0.21) / 3.0, 1e-12);
}

TEST_F(BeamSearchScenario, TheSearchEndsWhenNoLiveHypothesisCanBeatTheNBest) {
  BeamStepPlan plan;
  BeamSearch search = RunToStepThree(4, &plan);
  // log(.075)/4 = -0.648 <= -0.520: nothing live can win; its slot goes too.
  EXPECT_TRUE(search.done());
  EXPECT_TRUE(search.live().empty());
  EXPECT_TRUE(plan.copies.empty());
  EXPECT_EQ(Sorted(plan.released), (Slots{10, 11}));
  EXPECT_TRUE(search.held_slots().empty());
  const std::vector<BeamHypothesis> best = search.Best();
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].ids, (std::vector<int32_t>{1, 0, 3}));
  EXPECT_EQ(best[0].reason, FinishReason::kEos);
  EXPECT_NEAR(best[0].logprob_sum, std::log(0.5 * 0.6 * 0.7), 1e-12);
}

TEST(BeamSearchTest, AParentFeedingSeveralChildrenKeepsItsSlotAndCopiesGoToFreedSlots) {
  // Width 3, no eos. Step 1 (.34 .33 .32 .01): [0] slot 5, [1] copied 5 -> 6, [2] copied 5 -> 8
  // (free slots are handed out lowest first).
  BeamSearchOptions options = Options(3, 3, 0.0, 10);
  options.eos_ids.clear();
  BeamSearch search(options, {5, 8, 6});
  BeamStepPlan plan = search.Advance(LogRows({{0.34, 0.33, 0.32, 0.01}}), kVocab);
  EXPECT_EQ(plan.copies, (Copies{{5, 6}, {5, 8}}));
  // Step 2: all three survivors are children of the last hypothesis ([2], slot 8):
  // [2,1] .32*.4 = .128, [2,0] .096, [2,2] .0928 beat [0,x] .34*.25 = .085 and [1,x] .0825.
  // The first stays in 8; the others are copied from 8 into the childless parents' slots 5
  // and 6, so 8, the source, is never written.
  plan = search.Advance(
      LogRows({{0.25, 0.25, 0.25, 0.25}, {0.25, 0.25, 0.25, 0.25}, {0.3, 0.4, 0.29, 0.01}}),
      kVocab);
  ASSERT_EQ(search.live().size(), 3u);
  EXPECT_EQ(Ids(search, 0), (std::vector<int32_t>{2, 1}));
  EXPECT_EQ(Ids(search, 1), (std::vector<int32_t>{2, 0}));
  EXPECT_EQ(Ids(search, 2), (std::vector<int32_t>{2, 2}));
  EXPECT_EQ(search.live()[0].slot, 8);
  EXPECT_EQ(plan.copies, (Copies{{8, 5}, {8, 6}}));
  ExpectNoSourceOverwritten(plan);
  EXPECT_TRUE(plan.released.empty());
}

TEST(BeamSearchTest, RanksTiesByTheEarlierHypothesisThenTheLowerId) {
  BeamSearchOptions options = Options(2, 1, 0.0, 10);
  options.eos_ids.clear();
  BeamSearch search(options, {0, 1});
  search.Advance(LogRows({{0.5, 0.5, 1e-9, 1e-9}}), kVocab);  // [0] then [1] (tie: lower id)
  EXPECT_EQ(Ids(search, 0), (std::vector<int32_t>{0}));
  EXPECT_EQ(Ids(search, 1), (std::vector<int32_t>{1}));
  // Every pair ties at log(.25): [0,0] and [0,1] (the earlier hypothesis first).
  search.Advance(LogRows({{0.25, 0.25, 0.25, 0.25}, {0.25, 0.25, 0.25, 0.25}}), kVocab);
  EXPECT_EQ(Ids(search, 0), (std::vector<int32_t>{0, 0}));
  EXPECT_EQ(Ids(search, 1), (std::vector<int32_t>{0, 1}));
}

TEST(BeamSearchTest, EndingsFinishWithTheirReasonAndFreeTheirSlotsAtOnce) {
  // Width 3, eos 3, stop token 2, max_length 2. Step 1 (.1 .2 .3 .4): eos (.4) finishes,
  // stop token 2 (.3) finishes, 1 (.2) lives: two slots go back at once.
  BeamSearchOptions options = Options(3, 3, 0.5, 2);
  options.stop_token_ids = {2};
  BeamSearch search(options, {0, 1, 2});
  BeamStepPlan plan = search.Advance(LogRows({{0.1, 0.2, 0.3, 0.4}}), kVocab);
  ASSERT_EQ(search.live().size(), 1u);
  EXPECT_EQ(search.live()[0].slot, 0);
  EXPECT_EQ(Sorted(plan.released), (Slots{1, 2}));
  // Step 2: keep 3 - 2 = 1: [1,0] (.2*.7) reaches max_length.
  plan = search.Advance(LogRows({{0.7, 0.1, 0.1, 0.1}}), kVocab);
  EXPECT_TRUE(search.done());
  EXPECT_EQ(Sorted(plan.released), (Slots{0}));
  const std::vector<BeamHypothesis> best = search.Best();
  // Scores: eos log(.4)/1 = -0.916, stop log(.3) = -1.204, [1,0] log(.14)/sqrt(2) = -1.390.
  ASSERT_EQ(best.size(), 3u);
  EXPECT_EQ(best[0].ids, (std::vector<int32_t>{3}));
  EXPECT_EQ(best[0].reason, FinishReason::kEos);
  EXPECT_EQ(best[1].ids, (std::vector<int32_t>{2}));
  EXPECT_EQ(best[1].reason, FinishReason::kStopToken);
  EXPECT_EQ(best[2].ids, (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(best[2].reason, FinishReason::kLength);
  EXPECT_NEAR(best[2].score, std::log(0.14) / std::sqrt(2.0), 1e-12);
  EXPECT_NEAR(best[2].logprob_sum, std::log(0.14), 1e-12);
}

TEST(BeamSearchTest, BestKeepsNBestByScoreNotBySum) {
  // Width 2, n_best 1, length penalty 1, max_length 3, no eos.
  // Step 1 (.6 .4 0 0): [0] .6, [1] .4.
  BeamSearchOptions options = Options(2, 1, 1.0, 3);
  options.eos_ids.clear();
  options.stop_token_ids = {3};
  BeamSearch search(options, {0, 1});
  search.Advance(LogRows({{0.6, 0.4, 1e-12, 1e-12}}), kVocab);
  // Step 2 ([0] -> .2 .2 .1 .5, [1] -> .9 .04 .03 .03): keep [1,0] .36 and [0,stop] .3.
  // [0,stop] finishes at length 2: score log(.3)/2 = -0.602. [1,0] .4*.9 = .36 lives.
  search.Advance(LogRows({{0.2, 0.2, 0.1, 0.5}, {0.9, 0.04, 0.03, 0.03}}), kVocab);
  ASSERT_EQ(search.live().size(), 1u);
  EXPECT_FALSE(search.done());  // log(.36)/3 = -0.341 may still beat -0.602
  // [1,0,1] .36*.5 = .18 at max_length 3: log(.18)/3 = -0.572, better than -0.602 although its
  // sum (-1.71) is below the other's (-1.20).
  search.Advance(LogRows({{0.2, 0.5, 0.2, 0.1}}), kVocab);
  EXPECT_TRUE(search.done());
  const std::vector<BeamHypothesis> best = search.Best();
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].ids, (std::vector<int32_t>{1, 0, 1}));
  EXPECT_NEAR(best[0].score, std::log(0.18) / 3.0, 1e-12);
}

TEST(BeamSearchTest, WithoutALengthPenaltyTheSearchStopsOnceTheSumsFallBelowTheNBest) {
  // Width 2, n_best 1, penalty 0, no max in sight. Step 1 (.5 .45 .04 .01): [0] .5, [1] .45.
  BeamSearch search(Options(2, 1, 0.0, 100), {0, 1});
  search.Advance(LogRows({{0.5, 0.45, 0.04, 0.01}}), kVocab);
  // [0,eos] .4 finishes (sum log .4); [1,0] .45*.5 = .225 lives: .225 < .4 and a sum only
  // falls, so it cannot win: done.
  const BeamStepPlan plan =
      search.Advance(LogRows({{0.1, 0.1, 0.0, 0.8}, {0.5, 0.3, 0.1, 0.1}}), kVocab);
  EXPECT_TRUE(search.done());
  EXPECT_EQ(Sorted(plan.released), (Slots{0, 1}));
  ASSERT_EQ(search.Best().size(), 1u);
  EXPECT_EQ(search.Best()[0].ids, (std::vector<int32_t>{0, 3}));
}

TEST(BeamSearchTest, EndingTokensAreMaskedBeforeMinLengthAndNonFiniteOnesNeverPicked) {
  BeamSearchOptions options = Options(2, 2, 0.0, 10);
  options.min_length = 1;
  options.stop_token_ids = {2};
  BeamSearch search(options, {0, 1});
  std::vector<double> row = LogRows({{0.1, 0.2, 0.3, 0.4}});
  row[1] = -std::numeric_limits<double>::infinity();
  // eos (3) and the stop token (2) are masked, 1 is impossible: only 0 is left, so one of the
  // two slots goes back.
  const BeamStepPlan plan = search.Advance(row, kVocab);
  ASSERT_EQ(search.live().size(), 1u);
  EXPECT_EQ(Ids(search, 0), (std::vector<int32_t>{0}));
  EXPECT_EQ(Sorted(plan.released), (Slots{1}));
  // From one token on, eos may end it.
  search.Advance(LogRows({{0.1, 0.1, 0.1, 0.7}}), kVocab);
  EXPECT_EQ(search.Best()[0].ids, (std::vector<int32_t>{0, 3}));
}

TEST(BeamSearchTest, ScoreDividesTheSumByTheLengthToThePenalty) {
  EXPECT_DOUBLE_EQ(BeamSearch::Score(-2.0, 4, 1.0), -0.5);
  EXPECT_DOUBLE_EQ(BeamSearch::Score(-2.0, 4, 0.5), -1.0);
  EXPECT_DOUBLE_EQ(BeamSearch::Score(-2.0, 4, 0.0), -2.0);
  EXPECT_DOUBLE_EQ(BeamSearch::Score(-2.0, 4, -1.0), -8.0);
}

}  // namespace
}  // namespace slotserve::engine
