// The in-process serving engine (engine::Scheduler: continuous batching, sampling, slot pool)
// driven directly, without gRPC: N requests submitted at once, each generating a fixed number
// of tokens (greedy, ignore_eos). Sits between LanguageModel::Step (the decode suite) and the
// gRPC end-to-end load generator, so the report can say where the time goes.
#pragma once

#include <filesystem>

#include "absl/status/status.h"
#include "bench/result_table.h"
#include "kernels/backend.h"

namespace slotserve::bench {

struct SchedulerBenchOptions {
  int concurrency = 32;  // requests in flight, and the scheduler's max_slots
  int prompt_tokens = 16;
  int new_tokens = 64;
  int rounds = 3;  // independent rounds after one warm-up round; the table quotes medians
};

// Columns: model, kind, concurrency, prompt_tokens, new_tokens, steady_tokens_per_s,
// overall_tokens_per_s, ttft_ms_p50, ttft_ms_p99, itl_ms_p50, itl_ms_p90, itl_ms_p99.
ResultTable MakeSchedulerTable();

absl::Status RunSchedulerPoint(const std::filesystem::path& model_dir, kernels::Backend backend,
                               const SchedulerBenchOptions& options, ResultTable& table);

}  // namespace slotserve::bench
