// Repeated timing with robust statistics. Every benchmark number slotserve prints is the median
// of several timed repeats (with the 10th and 90th percentiles beside it), because on a shared
// machine single runs and means are dominated by interference.
#pragma once

#include <chrono>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"

namespace slotserve::bench {

// Seconds per unit of work over the timed repeats.
struct Timing {
  double median = 0;
  double p10 = 0;
  double p90 = 0;
  int repeats = 0;
};

struct RepeatPlan {
  int warmup = 1;   // untimed runs of `body` first (caches, page faults, lazy allocations)
  int repeats = 7;  // timed runs
  // ... and at least this long of them when warmup > 0: a second compute thread that has just
  // been woken runs a batch-1 step ~2.5x slower for tens of milliseconds (seen at --threads 2,
  // on the first point of a run only), longer than a few untimed repeats last.
  double warmup_seconds = 0.1;
};

// Runs `setup` (untimed) then `body` warmup times (or for warmup_seconds, whichever is longer;
// untimed) and then repeats times (timed); each timed duration is
// divided by `units` (e.g. the decode steps or tokens one body run performs). The first error
// of either callback is returned.
absl::StatusOr<Timing> TimeRepeats(const RepeatPlan& plan, double units,
                                   const std::function<absl::Status()>& setup,
                                   const std::function<absl::Status()>& body);

// Percentile (0..100) of `values` by linear interpolation between order statistics; 0 when
// `values` is empty.
double Percentile(std::vector<double> values, double percentile);

// Monotonic seconds since an arbitrary origin.
inline double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace slotserve::bench
