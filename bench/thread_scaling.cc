#include "bench/thread_scaling.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/compute_threads.h"
#include "base/status_macros.h"
#include "base/worker_pool.h"
#include "bench/timing.h"

namespace slotserve::bench {
namespace {

// Seconds of one timed run of `body` on `threads` compute threads, after untimed runs of it for
// settle_seconds (the first switch to N threads starts a worker; see ScalingOptions).
absl::StatusOr<double> TimeOn(int threads, const ScalingOptions& options,
                              const std::function<absl::Status()>& setup,
                              const std::function<absl::Status()>& body) {
  base::SetComputeThreads(threads);
  const RepeatPlan plan{.warmup = 1, .repeats = 1, .warmup_seconds = options.settle_seconds};
  SLOTSERVE_ASSIGN_OR_RETURN(Timing timing, TimeRepeats(plan, /*units=*/1, setup, body));
  return timing.median;
}

// Pairs of timed runs, one thread and options.threads, in alternating order.
struct PairedTimes {
  std::vector<double> one;
  std::vector<double> many;
};

absl::StatusOr<PairedTimes> TimePairs(const ScalingOptions& options,
                                      const std::function<absl::Status()>& setup,
                                      const std::function<absl::Status()>& body) {
  PairedTimes times;
  for (int pair = 0; pair < options.pairs; ++pair) {
    const bool one_first = pair % 2 == 0;
    for (int leg = 0; leg < 2; ++leg) {
      const bool one = (leg == 0) == one_first;
      SLOTSERVE_ASSIGN_OR_RETURN(double seconds,
                                 TimeOn(one ? 1 : options.threads, options, setup, body));
      (one ? times.one : times.many).push_back(seconds);
    }
  }
  base::SetComputeThreads(options.threads);
  return times;
}

void AddRow(const std::string& name, const std::string& kind, int batch, int threads,
            const PairedTimes& times, double units, ResultTable& table) {
  std::vector<double> ratios;
  for (size_t i = 0; i < times.one.size(); ++i) ratios.push_back(times.one[i] / times.many[i]);
  const double one = Percentile(times.one, 50) / units;
  const double many = Percentile(times.many, 50) / units;
  table.NewRow()
      .Add(name)
      .Add(kind)
      .Add(batch)
      .Add(threads)
      .Add(one * 1e3, 4)
      .Add(many * 1e3, 4)
      .Add(one / many, 3)
      .Add(Percentile(times.one, 10) / Percentile(times.many, 10), 3)
      .Add(Percentile(ratios, 50), 3)
      .Add(Percentile(ratios, 10), 3)
      .Add(Percentile(ratios, 90), 3);
}

// Keeps `value` computed here: the compiler may not drop it or move its computation past the
// clock reads around it (a pure computation could otherwise sink below an opaque call).
inline void KeepValue(float value) { asm volatile("" : : "x"(value) : "memory"); }

// Independent multiply-add chains, no memory traffic: the work a core does alone. This file is
// built for x86-64-v3 like the kernels, so the 64 chains are eight 256-bit FMA chains: enough to
// keep both FMA pipes busy, and the same power state the kernels' AVX2 loops put a core in.
// Not inlined, so the probe and the jobs run the same machine code.
__attribute__((noinline)) float MultiplyAddChains(int64_t iterations) {
  // Neither the count nor the factors are compile-time constants, or the loop folds away.
  float factor = 0.9999999f, addend = 1e-7f;
  asm volatile("" : "+r"(iterations), "+x"(factor), "+x"(addend));
  constexpr int kChains = 64;
  float acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = 1.0f + c * 1e-3f;
  for (int64_t i = 0; i < iterations; ++i) {
    for (int c = 0; c < kChains; ++c) acc[c] = acc[c] * factor + addend;
  }
  float sum = 0;
  for (int c = 0; c < kChains; ++c) sum += acc[c];
  return sum;
}

// Iterations of MultiplyAddChains that take about one microsecond on one thread here.
int64_t IterationsPerMicrosecond() {
  // The fastest of many short probes over 0.1 s: the core's clock ramps up over the first ones.
  constexpr int64_t kProbe = 1 << 18;
  double best = 1e9;
  for (const double begin = NowSeconds(); NowSeconds() - begin < 0.1;) {
    const double start = NowSeconds();
    KeepValue(MultiplyAddChains(kProbe));
    best = std::min(best, NowSeconds() - start);
  }
  return std::clamp<int64_t>(static_cast<int64_t>(kProbe / (best * 1e6)), 1, kProbe);
}

}  // namespace

ResultTable MakeThreadScalingTable(int threads) {
  return ResultTable(
      absl::StrCat("thread scaling, 1 against ", threads,
                   " threads in interleaved pairs (pair_ratio: one-thread time over N-thread time "
                   "of each pair)"),
      {"model", "kind", "batch", "threads", "step_ms_1", "step_ms_n", "ratio_of_medians",
       "ratio_of_p10", "pair_ratio", "pair_ratio_p10", "pair_ratio_p90"});
}

absl::Status AddThreadScalingRows(BenchModel& model, const std::vector<int>& batches, int context,
                                  const ScalingOptions& options, ResultTable& table) {
  if (options.threads < 2 || options.pairs < 1 || options.steps_per_repeat < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "thread scaling: need threads >= 2, pairs >= 1 and steps_per_repeat >= 1, got threads ",
        options.threads, ", pairs ", options.pairs, ", steps_per_repeat ",
        options.steps_per_repeat));
  }
  if (static_cast<int64_t>(context) + options.steps_per_repeat > model.model().max_positions()) {
    return absl::InvalidArgumentError(
        absl::StrCat(model.name(), ": context ", context, " plus ", options.steps_per_repeat,
                     " steps exceeds the model's ", model.model().max_positions(), " positions"));
  }
  SLOTSERVE_RETURN_IF_ERROR(model.GrowPristineContext(context));
  const bool sampled = options.sampling_temperature >= 0.0f;
  const std::string name =
      !sampled ? model.name()
      : options.sampling_top_p < 1.0f
          ? absl::StrCat(model.name(), " sampled t=", options.sampling_temperature,
                         " top_p=", options.sampling_top_p)
          : absl::StrCat(model.name(), " sampled t=", options.sampling_temperature);
  for (int batch : batches) {
    if (batch < 1 || batch > model.batch_slots()) {
      return absl::InvalidArgumentError(absl::StrCat(model.name(), ": batch ", batch,
                                                     " is outside the 1..", model.batch_slots(),
                                                     " slots allocated for it"));
    }
    SLOTSERVE_ASSIGN_OR_RETURN(
        PairedTimes times,
        TimePairs(
            options, [&] { return model.CopyPristineToBatch(batch); },
            [&]() -> absl::Status {
              for (int step = 0; step < options.steps_per_repeat; ++step) {
                SLOTSERVE_RETURN_IF_ERROR(
                    sampled ? model.StepAndSample(batch, options.sampling_temperature,
                                                  options.sampling_top_p)
                            : model.Step(batch));
              }
              return absl::OkStatus();
            }));
    AddRow(name, model.kind(), batch, options.threads, times, options.steps_per_repeat, table);
  }
  return absl::OkStatus();
}

absl::Status AddMachineScalingRows(const std::vector<int>& job_microseconds,
                                   const ScalingOptions& options, ResultTable& table) {
  const int64_t per_microsecond = IterationsPerMicrosecond();
  for (int job_us : job_microseconds) {
    if (job_us < 1) {
      return absl::InvalidArgumentError(absl::StrCat("machine scaling: job of ", job_us, " us"));
    }
    // About 20 ms of jobs per timed run, each job split between the pool's threads.
    const int jobs = std::max(1, 20000 / job_us);
    SLOTSERVE_ASSIGN_OR_RETURN(PairedTimes times,
                               TimePairs(options, /*setup=*/nullptr, [&]() -> absl::Status {
                                 for (int job = 0; job < jobs; ++job) {
                                   base::WorkerPool::Instance().Run([&](int, int parts) {
                                     KeepValue(MultiplyAddChains(job_us * per_microsecond / parts));
                                   });
                                 }
                                 return absl::OkStatus();
                               }));
    AddRow(absl::StrCat("fma-loop (", job_us, " us jobs)"), "machine", 0, options.threads, times,
           jobs, table);
  }
  return absl::OkStatus();
}

}  // namespace slotserve::bench
