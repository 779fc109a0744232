// The policy of one engine step (docs/ARCHITECTURE.md "A request's path"), as pure functions over
// plain numbers: which queued requests are admitted, which running requests decode, and which
// prompt chunks run. No threads, no model, no locks, so every rule is unit-tested on its own
// (tests/unit/engine/step_planner_test.cc). In the manner of TensorRT-LLM's capacity scheduler
// (admission) and micro-batch scheduler (what one step runs). The scheduler asks for admission
// first, acquires the admitted requests' slots, then plans the step over what is running.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace slotserve::engine {

// A queued request as admission sees it.
struct QueuedRequestView {
  // State slots the request holds once admitted: 1, n for a fork, the width for a beam search.
  int slots_needed = 1;
  // Cross memories it holds (an encoder–decoder model's requests: 1, shared by its slots).
  int cross_memories_needed = 0;
};

// How many requests from the front of the queue (`queue_head`, in arrival order) join this
// step: in arrival order while the next one's slots fit in `free_slots` and its cross memories
// in `free_cross_memories`. First come, first served: a request never overtakes one that
// arrived before it.
int PlanAdmission(int free_slots, std::span<const QueuedRequestView> queue_head,
                  int free_cross_memories = std::numeric_limits<int>::max());

// A running request (holding a slot) as the step plan sees it.
struct RunningRequestView {
  bool decoding = false;    // past its prompt: feeds its last token this step
  int decode_rows = 1;      // rows it decodes when decoding (a beam search: its live hypotheses)
  int64_t prompt_left = 0;  // prompt tokens not fed yet (0 once decoding)
  int64_t prompt_fed = 0;   // prompt tokens already in the state (fed or restored)
};

struct StepLimits {
  int token_budget = 0;   // tokens (decode + prefill) the step aims to stay within
  int prefill_chunk = 0;  // most prompt tokens of one request in one model call (> 0)
  // Prefix-state block (docs/ARCHITECTURE.md "Request state"); 0 = off. When > 0 no chunk crosses a
  // multiple of it (counted in prompt tokens), so every block boundary is a chunk boundary: the
  // prefix cache can checkpoint there, and a request restored at a boundary runs exactly the chunks
  // a request that prefilled from token 0 runs from there on (bitwise the same logits).
  int prefix_block = 0;
  // Prompt tokens (all chunks together) a step that also decodes may run, from the step
  // latency target (step_latency_budget.h); 0 = no cap. A step with nothing to decode has no
  // stream to stall and is not capped. It cuts chunks the way the token budget does: shorter,
  // still never across a prefix block boundary (checkpoints stay at every boundary).
  int64_t prefill_cap = 0;
};

// `tokens` prompt tokens of running request `request` (an index into the running list).
struct PromptChunk {
  size_t request = 0;
  int tokens = 0;
};

struct StepPlan {
  std::vector<size_t> decode;        // running indexes decoding one token, in running order
  std::vector<PromptChunk> prefill;  // prompt chunks to run after the decode, in this order
};

// The step for `running` (in admission order):
//   - every request past its prompt decodes one token (a row per beam hypothesis), in one batch;
//   - the rest of the budget (token_budget minus the decode rows, possibly <= 0) goes to
//     prompt chunks in admission order: each chunk is the request's prompt left, at most
//     prefill_chunk, and with a prefix_block at most up to the next multiple of it; a chunk larger
//     than a positive budget left is cut to that budget; once the budget is spent no further chunk
//     runs, but the step always runs at least one chunk when a prompt is waiting, so prompts never
//     starve behind a full decode batch;
//   - when requests decode and prefill_cap > 0, the prompt tokens of the step stay within it
//     the same way (a chunk cut to what is left of it; further chunks stop once it is spent).
StepPlan PlanStep(std::span<const RunningRequestView> running, const StepLimits& limits);

}  // namespace slotserve::engine
