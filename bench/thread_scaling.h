// Thread scaling measured in pairs (issue 16 item 2: N threads against one). On a shared VM the
// speed of one core drifts by tens of percent over seconds (host phases the guest cannot see:
// one-thread medians of the same decode point moved 1.55 -> 2.01 ms between two runs minutes
// apart), so a ratio of two separate runs measures the host as much as the engine. Here every
// timed repeat on one thread is paired with one on N threads taken right after it (the order
// alternating), and the row quotes the median of the per-pair ratios beside the medians.
//
// The same protocol measures what the machine allows: a pure FMA loop split by the engine's
// worker pool in jobs the size of a decode step's ops (and in long jobs), the ceiling any kernel
// can reach on these cores.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "bench/bench_model.h"
#include "bench/result_table.h"

namespace slotserve::bench {

struct ScalingOptions {
  int threads = 2;           // N, compared with one thread
  int pairs = 15;            // timed (1, N) pairs per point
  int steps_per_repeat = 8;  // decode steps of one timed repeat
  // Untimed work after each switch of the thread count, before the timed repeat: a worker
  // thread that has just been started (or a vCPU that idled through the one-thread repeat)
  // runs slow for tens of milliseconds.
  double settle_seconds = 0.03;
  // < 0: time Step (all logits to the host, as the decode suite does); >= 0: StepAndSample at
  // this temperature, the server's step with its token selection (0: greedy).
  float sampling_temperature = -1.0f;
  // The sampled step's nucleus (1: off), with sampling_temperature > 0.
  float sampling_top_p = 1.0f;
};

// Columns: model, kind, batch, threads, step_ms_1 (median), step_ms_n (median),
// ratio_of_medians, ratio_of_p10 (the fastest tenth of each side: the runs the host disturbed
// least), pair_ratio (median), pair_ratio_p10, pair_ratio_p90.
ResultTable MakeThreadScalingTable(int threads);

// One row per batch size of `model`, decoding from `context` tokens (named "MODEL sampled
// t=T" when options.sampling_temperature >= 0, "MODEL sampled t=T top_p=P" with a nucleus). Leaves
// the compute threads at options.threads.
absl::Status AddThreadScalingRows(BenchModel& model, const std::vector<int>& batches, int context,
                                  const ScalingOptions& options, ResultTable& table);

// Rows "fma-loop (job_us us)" for each job size: the worker pool splitting independent FMA
// chains, the same pairing. Leaves the compute threads at options.threads.
absl::Status AddMachineScalingRows(const std::vector<int>& job_microseconds,
                                   const ScalingOptions& options, ResultTable& table);

}  // namespace slotserve::bench
