// Decode step timing (LanguageModel::Step, engine only: no sampling, no scheduler, no RPC):
// tokens/s against batch size at a fixed context, and per-token latency against context
// length at a fixed batch. Both tables share one row format.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "bench/bench_model.h"
#include "bench/result_table.h"
#include "bench/timing.h"

namespace slotserve::bench {

struct DecodeOptions {
  int steps_per_repeat = 8;  // decode steps timed together; every repeat starts from the context
  RepeatPlan plan;
};

// Columns: model, kind, batch, context, step_ms (median, p10, p90), tokens_per_s,
// model_gflop_per_s (BenchModel's matmul + attention FLOPs per token at the measured rate).
ResultTable MakeDecodeTable(const std::string& title);

// Adds one row per batch size, each decoding from a context of `context` tokens.
absl::Status RunBatchSweep(BenchModel& model, const std::vector<int>& batches, int context,
                           const DecodeOptions& options, ResultTable& table);

// Adds one row per context length at batch size `batch`. Contexts the model cannot hold (a
// softmax max_context too small) are skipped with a note on stderr.
absl::Status RunContextSweep(BenchModel& model, const std::vector<int>& contexts, int batch,
                             const DecodeOptions& options, ResultTable& table);

}  // namespace slotserve::bench
