#include "engine/step_planner.h"

#include <algorithm>

namespace slotserve::engine {

int PlanAdmission(int free_slots, std::span<const QueuedRequestView> queue_head) {
  int admitted = 0;
  for (const QueuedRequestView& queued : queue_head) {
    if (queued.slots_needed > free_slots) break;
    free_slots -= queued.slots_needed;
    ++admitted;
  }
  return admitted;
}

StepPlan PlanStep(std::span<const RunningRequestView> running, const StepLimits& limits) {
  StepPlan plan;
  for (size_t i = 0; i < running.size(); ++i) {
    if (running[i].decoding) plan.decode.push_back(i);
  }
  int64_t budget = limits.token_budget - static_cast<int64_t>(plan.decode.size());
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
    plan.prefill.push_back({i, static_cast<int>(chunk)});
    budget -= chunk;
  }
  return plan;
}

}  // namespace slotserve::engine
