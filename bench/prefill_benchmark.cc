#include "bench/prefill_benchmark.h"
#include "base/status_macros.h"

#include <iostream>

namespace slotserve::bench {

ResultTable MakePrefillTable() {
  return ResultTable("prefill (engine only, one request, empty slot)",
                     {"model", "kind", "prompt_tokens", "ttft_ms", "ttft_ms_p10", "ttft_ms_p90",
                      "prefill_tokens_per_s"});
}

absl::Status RunPrefillSweep(BenchModel& model, const std::vector<int>& prompt_lengths,
                             const RepeatPlan& plan, ResultTable& table) {
  for (int length : prompt_lengths) {
    if (length > model.model().max_positions()) {
      std::cerr << "note: " << model.name() << " skips prompt length " << length
                << ": it holds at most " << model.model().max_positions() << " positions\n";
      continue;
    }
    // The slot reset is untimed: it is a memset of the whole state, which for the softmax
    // baseline is the KV cache at max_context and would swamp short prompts.
    SLOTSERVE_ASSIGN_OR_RETURN(Timing timing,
                               TimeRepeats(
                                   plan, 1, [&] { return model.states().Reset(0); },
                                   [&] { return model.PrefillIntoEmptySlot(length); }));
    table.NewRow()
        .Add(model.name())
        .Add(model.kind())
        .Add(length)
        .Add(timing.median * 1e3, 3)
        .Add(timing.p10 * 1e3, 3)
        .Add(timing.p90 * 1e3, 3)
        .Add(length / timing.median, 1);
  }
  return absl::OkStatus();
}

}  // namespace slotserve::bench
