// How many prompt tokens a step may prefill beside its decode batch and stay within a latency
// target (`--max-step-latency`, issue 16 item 3). The engine thread measures every model
// call; this file turns those measurements into a token cap, as plain arithmetic with no
// clock and no threads, so every rule is unit-tested on given costs
// (tests/unit/engine/step_latency_budget_test.cc). Why: a long prompt fed in large chunks
// stalls every stream decoding beside it for the whole chunk; costing prefill tokens online
// lets the planner cut chunks so that a step stays near the decode step the streams expect.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace slotserve::engine {

// The median of the last `window` samples: robust to the odd slow step (a page fault, a
// preempted core) that a mean would carry for long.
class RunningMedian {
 public:
  explicit RunningMedian(int window = 63);
  void Add(double sample);
  bool empty() const { return filled_ == 0; }
  // The median of the samples kept (the lower middle for an even count); 0 when empty.
  double Median() const;

 private:
  std::vector<double> ring_;
  int next_ = 0;
  int filled_ = 0;
  mutable std::vector<double> sorted_;  // reused by Median(): no allocation per step
};

// What the step latency target is.
struct StepLatencyTarget {
  enum class Mode { kOff, kAuto, kFixed };
  Mode mode = Mode::kAuto;
  absl::Duration fixed = absl::ZeroDuration();  // kFixed only, > 0
  // kAuto: the target is this many times the running median decode step. 3 leaves room under
  // the guarantee of 5x the median inter-token gap for the noise of one step.
  double auto_multiple = 3.0;
};

// Parses "auto", "off" or a positive duration ("20ms", "1.5ms") into *target; false with
// *error saying what was expected otherwise.
bool ParseStepLatencyTarget(const std::string& text, StepLatencyTarget* target, std::string* error);

// "auto (3x the median decode step)", "off" or the duration ("20ms"), for the start-up log.
std::string DescribeStepLatencyTarget(const StepLatencyTarget& target);

// Online costs of the model calls, fed by the engine thread after every call.
class StepCostModel {
 public:
  // A decode call of `batch` requests took `seconds`.
  void ObserveDecode(int batch, double seconds);
  // A prefill call of `tokens` prompt tokens took `seconds`. Cost per token includes the
  // call's fixed overhead, so small chunks look dearer per token: the cap errs on the short
  // side.
  void ObservePrefill(int tokens, double seconds);

  bool has_decode() const { return !decode_seconds_.empty(); }
  bool has_prefill() const { return !prefill_seconds_per_token_.empty(); }
  double decode_step_seconds() const { return decode_seconds_.Median(); }
  double prefill_seconds_per_token() const { return prefill_seconds_per_token_.Median(); }

 private:
  RunningMedian decode_seconds_;
  RunningMedian prefill_seconds_per_token_;
};

// Tokens a step that decodes may prefill beside its decode batch, or 0 for "no cap":
//   - no cap when the target is off or nothing has been measured to derive it from;
//   - before the first prefill is measured: `probe_tokens`, a cheap first measurement;
//   - else floor((target - decode step) / prefill seconds per token), at least 1 so a prompt
//     always advances (the planner's at-least-one-chunk rule).
// With kAuto the target is auto_multiple x the median decode step.
int64_t PrefillTokenCap(const StepLatencyTarget& target, const StepCostModel& costs,
                        int64_t probe_tokens = 16);

}  // namespace slotserve::engine
