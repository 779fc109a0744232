// Prefill timing: one request's prompt fed into an empty slot with LanguageModel::Prefill,
// logits of the last token only. Engine-only time to first token (no queueing, no sampling,
// no RPC) and prefill throughput against prompt length.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "bench/bench_model.h"
#include "bench/result_table.h"
#include "bench/timing.h"

namespace slotserve::bench {

// Columns: model, kind, prompt_tokens, ttft_ms (median, p10, p90), prefill_tokens_per_s.
ResultTable MakePrefillTable();

// Adds one row per prompt length. Prompts longer than the model holds are skipped with a note
// on stderr.
absl::Status RunPrefillSweep(BenchModel& model, const std::vector<int>& prompt_lengths,
                             const RepeatPlan& plan, ResultTable& table);

}  // namespace slotserve::bench
