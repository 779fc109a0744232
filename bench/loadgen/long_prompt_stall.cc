#include "bench/loadgen/long_prompt_stall.h"

#include <algorithm>

namespace slotserve::bench {

LongPromptStall MeasureLongPromptStall(const std::vector<RequestTrace>& streams,
                                       const RequestTrace& long_prompt) {
  LongPromptStall stall;
  const double sent = long_prompt.submitted;
  const double first =
      long_prompt.token_times.empty() ? long_prompt.finished : long_prompt.token_times.front();
  stall.ttft_s = first - sent;
  std::vector<double> before;
  for (const RequestTrace& stream : streams) {
    for (size_t i = 1; i < stream.token_times.size(); ++i) {
      const double from = stream.token_times[i - 1], to = stream.token_times[i];
      if (to < sent) before.push_back(to - from);
      if (to >= sent && from <= first) {
        stall.max_gap_s = std::max(stall.max_gap_s, to - from);
        ++stall.gaps_in_window;
      }
    }
  }
  if (!before.empty()) {
    const auto middle = before.begin() + (before.size() - 1) / 2;
    std::nth_element(before.begin(), middle, before.end());
    stall.median_gap_s = *middle;
  }
  if (stall.median_gap_s > 0) stall.ratio = stall.max_gap_s / stall.median_gap_s;
  return stall;
}

}  // namespace slotserve::bench
