#include "engine/step_planner.h"

#include <algorithm>

namespace slotserve::engine {

int PlanAdmission(int free_slots, std::span<const QueuedRequestView> queue_head,
                  int free_cross_memories) {
  int admitted = 0;
  for (const QueuedRequestView& queued : queue_head) {
    if (queued.slots_needed > free_slots) break;
    if (queued.cross_memories_needed > free_cross_memories) break;
    free_slots -= queued.slots_needed;
    free_cross_memories -= queued.cross_memories_needed;
    ++admitted;
  }
  return admitted;
}

StepPlan PlanStep(std::span<const RunningRequestView> running, const StepLimits& limits) {
  StepPlan plan;
  int64_t decode_rows = 0;
  for (size_t i = 0; i < running.size(); ++i) {
    if (!running[i].decoding) continue;
    plan.decode.push_back(i);
    decode_rows += running[i].decode_rows;
  }
  int64_t budget = limits.token_budget - decode_rows;
  // The latency cap binds only beside a decode batch: alone, a prompt stalls nobody.
  const bool latency_capped = limits.prefill_cap > 0 && !plan.decode.empty();
  int64_t latency_left = limits.prefill_cap;
  for (size_t i = 0; i < running.size(); ++i) {
    const RunningRequestView& request = running[i];
    if (request.decoding || request.prompt_left <= 0) continue;
    int64_t chunk = std::min<int64_t>(request.prompt_left, limits.prefill_chunk);
    if (limits.prefix_block > 0) {
      chunk =
          std::min<int64_t>(chunk, limits.prefix_block - request.prompt_fed % limits.prefix_block);
    }
    if (budget < chunk) {
      if (budget > 0) {
        chunk = budget;
      } else if (!plan.prefill.empty()) {
        break;
      }
    }
    if (latency_capped && latency_left < chunk) {
      if (latency_left <= 0 && !plan.prefill.empty()) break;
      // Cut like the token budget cuts: shorter, never across a prefix block boundary.
      if (latency_left > 0) chunk = latency_left;
    }
    plan.prefill.push_back({i, static_cast<int>(chunk)});
    budget -= chunk;
    latency_left -= chunk;
  }
  return plan;
}

}  // namespace slotserve::engine
