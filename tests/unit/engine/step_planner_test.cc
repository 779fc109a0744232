// The step planner's rules (engine/step_planner.h) on plain numbers, without threads or a
// model: admission by free slots in arrival order, every request past its prompt decoding, the
// token budget split between the decode batch and prompt chunks, chunks in admission order,
// capped by prefill_chunk, cut to a positive budget, and at least one chunk per step.
#include "engine/step_planner.h"

#include <gtest/gtest.h>

#include <vector>

namespace slotserve::engine {
namespace {

RunningRequestView Decoding() { return {.decoding = true, .prompt_left = 0}; }
RunningRequestView Prompt(int64_t left) { return {.decoding = false, .prompt_left = left}; }

std::vector<std::pair<size_t, int>> Chunks(const StepPlan& plan) {
  std::vector<std::pair<size_t, int>> chunks;
  for (const PromptChunk& chunk : plan.prefill) chunks.emplace_back(chunk.request, chunk.tokens);
  return chunks;
}

using ChunkList = std::vector<std::pair<size_t, int>>;

TEST(PlanAdmissionTest, AdmitsFromTheFrontWhileSlotsAreFree) {
  const std::vector<QueuedRequestView> queue(5);
  EXPECT_EQ(PlanAdmission(3, queue), 3);
  EXPECT_EQ(PlanAdmission(5, queue), 5);
  EXPECT_EQ(PlanAdmission(9, queue), 5) << "no more than are queued";
  EXPECT_EQ(PlanAdmission(0, queue), 0) << "no free slot, nobody joins";
  EXPECT_EQ(PlanAdmission(4, {}), 0);
}

TEST(PlanAdmissionTest, ARequestNeedingMoreSlotsThanAreFreeHoldsBackTheOnesBehindIt) {
  // First come, first served: the third would fit, but it may not overtake the second.
  const std::vector<QueuedRequestView> queue = {
      {.slots_needed = 1}, {.slots_needed = 2}, {.slots_needed = 1}};
  EXPECT_EQ(PlanAdmission(2, queue), 1);
  EXPECT_EQ(PlanAdmission(3, queue), 2);
  EXPECT_EQ(PlanAdmission(4, queue), 3);
}

TEST(PlanAdmissionTest, EncoderDecoderRequestsAlsoNeedAFreeCrossMemoryEach) {
  // Beams of width 3 and plain requests, one cross memory each (shared by the beams).
  const std::vector<QueuedRequestView> queue = {{.slots_needed = 3, .cross_memories_needed = 1},
                                                {.slots_needed = 1, .cross_memories_needed = 1},
                                                {.slots_needed = 1, .cross_memories_needed = 1}};
  EXPECT_EQ(PlanAdmission(8, queue, 1), 1) << "slots for all, a cross memory for one";
  EXPECT_EQ(PlanAdmission(8, queue, 2), 2);
  EXPECT_EQ(PlanAdmission(8, queue, 3), 3);
  EXPECT_EQ(PlanAdmission(4, queue, 3), 2) << "slots still bound it";
  EXPECT_EQ(PlanAdmission(8, queue, 0), 0);
  EXPECT_EQ(PlanAdmission(8, queue), 3) << "by default cross memories do not bind";
}

TEST(PlanStepTest, NothingRunningPlansNothing) {
  const StepPlan plan = PlanStep({}, {.token_budget = 512, .prefill_chunk = 256});
  EXPECT_TRUE(plan.decode.empty());
  EXPECT_TRUE(plan.prefill.empty());
}

TEST(PlanStepTest, EveryRequestPastItsPromptDecodesInRunningOrder) {
  // Even when the decode batch alone exceeds the budget: decoding is never held back.
  const std::vector<RunningRequestView> running = {Decoding(), Prompt(3), Decoding(), Decoding()};
  const StepPlan plan = PlanStep(running, {.token_budget = 2, .prefill_chunk = 8});
  EXPECT_EQ(plan.decode, (std::vector<size_t>{0, 2, 3}));
}

TEST(PlanStepTest, PromptChunksGetWhatTheDecodeBatchLeavesOfTheBudget) {
  // Budget 10 - 3 decoding = 7: the first prompt's chunk of 8 is cut to 7, the budget is
  // spent, and the second prompt waits for the next step.
  const std::vector<RunningRequestView> running = {Decoding(), Decoding(), Prompt(20), Decoding(),
                                                   Prompt(5)};
  const StepPlan plan = PlanStep(running, {.token_budget = 10, .prefill_chunk = 8});
  EXPECT_EQ(plan.decode.size(), 3u);
  EXPECT_EQ(Chunks(plan), (ChunkList{{2, 7}}));
}

TEST(PlanStepTest, ABeamSearchsHypothesesEachTakeADecodeRowOfTheBudget) {
  // Budget 10 - (1 + 4 beam rows) = 5: the prompt's chunk of 8 is cut to 5.
  RunningRequestView beam = Decoding();
  beam.decode_rows = 4;
  const std::vector<RunningRequestView> running = {Decoding(), beam, Prompt(20)};
  const StepPlan plan = PlanStep(running, {.token_budget = 10, .prefill_chunk = 8});
  EXPECT_EQ(plan.decode, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(Chunks(plan), (ChunkList{{2, 5}}));
}

TEST(PlanStepTest, ChunksRunInAdmissionOrderWhileTheBudgetLasts) {
  const std::vector<RunningRequestView> running = {Prompt(4), Prompt(6), Prompt(3), Prompt(9)};
  const StepPlan plan = PlanStep(running, {.token_budget = 12, .prefill_chunk = 100});
  // 4 + 6 = 10, then the 3-token prompt is cut to the 2 left, and the last one waits.
  EXPECT_EQ(Chunks(plan), (ChunkList{{0, 4}, {1, 6}, {2, 2}}));
}

TEST(PlanStepTest, AChunkIsAtMostPrefillChunkTokens) {
  const std::vector<RunningRequestView> running = {Prompt(1000), Prompt(100), Prompt(300)};
  const StepPlan plan = PlanStep(running, {.token_budget = 512, .prefill_chunk = 256});
  // 256 (capped) + 100 = 356; 156 left cuts the third prompt's 256-token chunk.
  EXPECT_EQ(Chunks(plan), (ChunkList{{0, 256}, {1, 100}, {2, 156}}));
}

TEST(PlanStepTest, AtLeastOneChunkRunsWhenDecodingFillsTheBudget) {
  // 4 decoding with a budget of 2 leaves -2: the first prompt still gets a whole chunk (not
  // cut, since no budget is left to cut it to), so prompts never starve; the second waits.
  const std::vector<RunningRequestView> running = {Decoding(), Decoding(), Prompt(30),
                                                   Decoding(), Decoding(), Prompt(30)};
  const StepPlan plan = PlanStep(running, {.token_budget = 2, .prefill_chunk = 8});
  EXPECT_EQ(Chunks(plan), (ChunkList{{2, 8}}));
}

TEST(PlanStepTest, AChunkThatSpendsTheBudgetExactlyStopsThePrefill) {
  const std::vector<RunningRequestView> running = {Decoding(), Prompt(7), Prompt(1)};
  const StepPlan plan = PlanStep(running, {.token_budget = 8, .prefill_chunk = 16});
  EXPECT_EQ(Chunks(plan), (ChunkList{{1, 7}}));
}

TEST(PlanStepTest, ShortPromptsAreFedWhole) {
  const std::vector<RunningRequestView> running = {Prompt(1), Prompt(2)};
  const StepPlan plan = PlanStep(running, {.token_budget = 512, .prefill_chunk = 256});
  EXPECT_TRUE(plan.decode.empty());
  EXPECT_EQ(Chunks(plan), (ChunkList{{0, 1}, {1, 2}}));
}

RunningRequestView Fed(int64_t fed, int64_t left) {
  return {.decoding = false, .prompt_left = left, .prompt_fed = fed};
}

TEST(PlanStepTest, WithAPrefixBlockNoChunkCrossesABlockBoundary) {
  // Block 64, chunk 256: a 300-token prompt runs 64, 64, 64, 64, 44; one restored at 128
  // runs the very same chunks from there (the rule that makes a prefix hit bitwise a miss).
  const StepLimits limits{.token_budget = 512, .prefill_chunk = 256, .prefix_block = 64};
  EXPECT_EQ(Chunks(PlanStep(std::vector{Fed(0, 300)}, limits)), (ChunkList{{0, 64}}));
  EXPECT_EQ(Chunks(PlanStep(std::vector{Fed(128, 172)}, limits)), (ChunkList{{0, 64}}));
  EXPECT_EQ(Chunks(PlanStep(std::vector{Fed(256, 44)}, limits)), (ChunkList{{0, 44}}));
  // A request mid-block (a chunk cut by the budget) runs only to the next boundary.
  EXPECT_EQ(Chunks(PlanStep(std::vector{Fed(40, 260)}, limits)), (ChunkList{{0, 24}}));
  // A prefill_chunk smaller than the block still never crosses it.
  const StepLimits small{.token_budget = 512, .prefill_chunk = 48, .prefix_block = 64};
  EXPECT_EQ(Chunks(PlanStep(std::vector{Fed(48, 100)}, small)), (ChunkList{{0, 16}}));
  EXPECT_EQ(Chunks(PlanStep(std::vector{Fed(64, 100)}, small)), (ChunkList{{0, 48}}));
}

TEST(PlanStepTest, PrefixBlockZeroLeavesChunksAsBefore) {
  const StepLimits limits{.token_budget = 512, .prefill_chunk = 256, .prefix_block = 0};
  EXPECT_EQ(Chunks(PlanStep(std::vector{Fed(40, 300)}, limits)), (ChunkList{{0, 256}}));
}

TEST(PlanStepTest, BesideADecodeBatchTheLatencyCapCutsPromptTokens) {
  const StepLimits limits{.token_budget = 512, .prefill_chunk = 256, .prefill_cap = 40};
  const std::vector<RunningRequestView> running = {Decoding(), Prompt(4000), Prompt(100)};
  EXPECT_EQ(Chunks(PlanStep(running, limits)), (ChunkList{{1, 40}}))
      << "the cap is spent by the first chunk, cut to it; the second prompt waits";
  const StepLimits wider{.token_budget = 512, .prefill_chunk = 30, .prefill_cap = 50};
  EXPECT_EQ(Chunks(PlanStep(running, wider)), (ChunkList{{1, 30}, {2, 20}}));
}

TEST(PlanStepTest, WithoutADecodeBatchTheLatencyCapDoesNotBind) {
  // Nobody decodes, so nobody stalls: the prompt runs at full chunks for its own TTFT.
  const StepLimits limits{.token_budget = 512, .prefill_chunk = 256, .prefill_cap = 40};
  EXPECT_EQ(Chunks(PlanStep(std::vector{Prompt(4000)}, limits)), (ChunkList{{0, 256}}));
}

TEST(PlanStepTest, TheLatencyCapNeverStarvesAPrompt) {
  const StepLimits limits{.token_budget = 512, .prefill_chunk = 256, .prefill_cap = 1};
  EXPECT_EQ(Chunks(PlanStep(std::vector{Decoding(), Prompt(4000)}, limits)), (ChunkList{{1, 1}}));
}

TEST(PlanStepTest, WithAPrefixBlockALatencyCutChunkStillEndsByTheNextBoundary) {
  // The cap cuts like the budget: a chunk ends at the cap or at the block boundary, whichever
  // comes first, so every block boundary is still a chunk boundary (checkpoints stay there).
  const StepLimits limits{
      .token_budget = 512, .prefill_chunk = 256, .prefix_block = 64, .prefill_cap = 40};
  const std::vector<RunningRequestView> fed_10 = {
      Decoding(), {.decoding = false, .prompt_left = 4000, .prompt_fed = 10}};
  EXPECT_EQ(Chunks(PlanStep(fed_10, limits)), (ChunkList{{1, 40}}));
  const std::vector<RunningRequestView> fed_50 = {
      Decoding(), {.decoding = false, .prompt_left = 4000, .prompt_fed = 50}, Prompt(64)};
  EXPECT_EQ(Chunks(PlanStep(fed_50, limits)), (ChunkList{{1, 14}, {2, 26}}))
      << "14 tokens reach the boundary at 64; the cap's rest goes to the next prompt";
}

}  // namespace
}  // namespace slotserve::engine
