#include "bench/serving_stats.h"

#include <algorithm>
#include <limits>

#include "bench/timing.h"

namespace slotserve::bench {

ServingStats SummarizeTraces(const std::vector<RequestTrace>& traces) {
  ServingStats stats;
  stats.requests = static_cast<int>(traces.size());
  if (traces.empty()) return stats;
  std::vector<double> ttft, itl, request_rates;
  double first_submit = std::numeric_limits<double>::max();
  double last_finish = std::numeric_limits<double>::lowest();
  double window_start = std::numeric_limits<double>::lowest();  // last first-token
  double window_end = std::numeric_limits<double>::max();       // first last-token
  for (const RequestTrace& trace : traces) {
    first_submit = std::min(first_submit, trace.submitted);
    last_finish = std::max(last_finish, trace.finished);
    stats.generated_tokens += static_cast<long long>(trace.token_times.size());
    if (trace.token_times.empty()) continue;
    ttft.push_back(trace.token_times.front() - trace.submitted);
    for (size_t i = 1; i < trace.token_times.size(); ++i) {
      itl.push_back(trace.token_times[i] - trace.token_times[i - 1]);
    }
    const double span = trace.token_times.back() - trace.token_times.front();
    if (trace.token_times.size() > 1 && span > 0) {
      request_rates.push_back((trace.token_times.size() - 1) / span);
    }
    window_start = std::max(window_start, trace.token_times.front());
    window_end = std::min(window_end, trace.token_times.back());
  }
  stats.duration_s = std::max(last_finish - first_submit, 0.0);
  if (stats.duration_s > 0) stats.overall_tokens_per_s = stats.generated_tokens / stats.duration_s;
  if (window_end > window_start) {
    long long in_window = 0;
    for (const RequestTrace& trace : traces) {
      for (double t : trace.token_times) in_window += (t > window_start && t <= window_end);
    }
    stats.steady_tokens_per_s = in_window / (window_end - window_start);
  }
  stats.ttft_p50_s = Percentile(ttft, 50);
  stats.ttft_p90_s = Percentile(ttft, 90);
  stats.ttft_p99_s = Percentile(ttft, 99);
  stats.itl_p50_s = Percentile(itl, 50);
  stats.itl_p90_s = Percentile(itl, 90);
  stats.itl_p99_s = Percentile(itl, 99);
  stats.request_tokens_per_s_p50 = Percentile(request_rates, 50);
  return stats;
}

}  // namespace slotserve::bench
