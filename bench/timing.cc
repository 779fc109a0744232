#include "bench/timing.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace slotserve::bench {

double Percentile(std::vector<double> values, double percentile) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::clamp(percentile, 0.0, 100.0) / 100.0 * (values.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(rank));
  const size_t above = std::min(below + 1, values.size() - 1);
  const double fraction = rank - below;
  return values[below] + fraction * (values[above] - values[below]);
}

absl::StatusOr<Timing> TimeRepeats(const RepeatPlan& plan, double units,
                                   const std::function<absl::Status()>& setup,
                                   const std::function<absl::Status()>& body) {
  if (plan.repeats <= 0 || plan.warmup < 0 || units <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("TimeRepeats: need repeats > 0, warmup >= 0 and units > 0, got repeats ",
                     plan.repeats, ", warmup ", plan.warmup, ", units ", units));
  }
  const double warmup_start = NowSeconds();
  for (int run = 0;
       plan.warmup > 0 && (run < plan.warmup || NowSeconds() - warmup_start < plan.warmup_seconds);
       ++run) {
    if (setup) {
      SLOTSERVE_RETURN_IF_ERROR(setup());
    }
    SLOTSERVE_RETURN_IF_ERROR(body());
  }
  std::vector<double> seconds_per_unit;
  for (int run = 0; run < plan.repeats; ++run) {
    if (setup) {
      SLOTSERVE_RETURN_IF_ERROR(setup());
    }
    const double start = NowSeconds();
    SLOTSERVE_RETURN_IF_ERROR(body());
    seconds_per_unit.push_back((NowSeconds() - start) / units);
  }
  Timing timing;
  timing.median = Percentile(seconds_per_unit, 50);
  timing.p10 = Percentile(seconds_per_unit, 10);
  timing.p90 = Percentile(seconds_per_unit, 90);
  timing.repeats = plan.repeats;
  return timing;
}

}  // namespace slotserve::bench
