#include "engine/step_latency_budget.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"

namespace slotserve::engine {

RunningMedian::RunningMedian(int window) : ring_(std::max(window, 1)) {
  sorted_.reserve(ring_.size());
}

void RunningMedian::Add(double sample) {
  ring_[next_] = sample;
  next_ = (next_ + 1) % static_cast<int>(ring_.size());
  filled_ = std::min(filled_ + 1, static_cast<int>(ring_.size()));
}

double RunningMedian::Median() const {
  if (filled_ == 0) return 0;
  sorted_.assign(ring_.begin(), ring_.begin() + filled_);
  const auto middle = sorted_.begin() + (filled_ - 1) / 2;
  std::nth_element(sorted_.begin(), middle, sorted_.end());
  return *middle;
}

bool ParseStepLatencyTarget(const std::string& text, StepLatencyTarget* target,
                            std::string* error) {
  if (text == "auto") {
    target->mode = StepLatencyTarget::Mode::kAuto;
    return true;
  }
  if (text == "off") {
    target->mode = StepLatencyTarget::Mode::kOff;
    return true;
  }
  absl::Duration fixed;
  if (!absl::ParseDuration(text, &fixed) || fixed <= absl::ZeroDuration() ||
      fixed == absl::InfiniteDuration()) {
    *error = "must be auto, off or a positive duration such as 20ms, got \"" + text + "\"";
    return false;
  }
  target->mode = StepLatencyTarget::Mode::kFixed;
  target->fixed = fixed;
  return true;
}

std::string DescribeStepLatencyTarget(const StepLatencyTarget& target) {
  switch (target.mode) {
    case StepLatencyTarget::Mode::kOff:
      return "off";
    case StepLatencyTarget::Mode::kAuto:
      return absl::StrCat("auto (", target.auto_multiple, "x the median decode step)");
    case StepLatencyTarget::Mode::kFixed:
      return absl::FormatDuration(target.fixed);
  }
  return "?";
}

void StepCostModel::ObserveDecode(int batch, double seconds) {
  if (batch > 0) decode_seconds_.Add(seconds);
}

void StepCostModel::ObservePrefill(int tokens, double seconds) {
  if (tokens > 0) prefill_seconds_per_token_.Add(seconds / tokens);
}

int64_t PrefillTokenCap(const StepLatencyTarget& target, const StepCostModel& costs,
                        int64_t probe_tokens) {
  if (target.mode == StepLatencyTarget::Mode::kOff) return 0;
  if (target.mode == StepLatencyTarget::Mode::kAuto && !costs.has_decode()) return 0;
  if (!costs.has_prefill()) return std::max<int64_t>(probe_tokens, 1);
  const double decode = costs.decode_step_seconds();
  const double target_seconds = target.mode == StepLatencyTarget::Mode::kFixed
                                    ? absl::ToDoubleSeconds(target.fixed)
                                    : target.auto_multiple * decode;
  const double per_token = costs.prefill_seconds_per_token();
  if (per_token <= 0) return 0;  // free prefill (a clock too coarse): nothing to bound
  // The epsilon keeps an exact quotient (80.0 computed as 79.999...) from losing a token.
  const double tokens = std::floor((target_seconds - decode) / per_token + 1e-6);
  // Clamp before converting: a huge target must not overflow.
  return static_cast<int64_t>(std::clamp(tokens, 1.0, 1e12));
}

}  // namespace slotserve::engine
