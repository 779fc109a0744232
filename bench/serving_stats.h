// Serving statistics from per-request token timestamps, vLLM benchmark_serving style: time to
// first token, inter-token latency percentiles, and throughput. Shared by the in-process
// scheduler benchmark and the gRPC load generator so both report the same quantities.
#pragma once

#include <vector>

namespace slotserve::bench {

// One request as the client saw it; times are seconds on one monotonic clock.
struct RequestTrace {
  double submitted = 0;
  std::vector<double> token_times;  // when each generated token arrived
  double finished = 0;
};

struct ServingStats {
  int requests = 0;
  long long generated_tokens = 0;
  double duration_s = 0;            // first submit to last finish
  double overall_tokens_per_s = 0;  // generated tokens / duration_s
  // Tokens/s while every request was generating: from the last request's first token to the
  // first request's last token (0 when that window is empty). This is the decode throughput
  // at full concurrency, without the ramp-up (prefill) and drain (stragglers) at the edges.
  double steady_tokens_per_s = 0;
  double ttft_p50_s = 0, ttft_p90_s = 0, ttft_p99_s = 0;
  double itl_p50_s = 0, itl_p90_s = 0, itl_p99_s = 0;
  double request_tokens_per_s_p50 = 0;  // per request: (tokens - 1) / (last - first token)
};

ServingStats SummarizeTraces(const std::vector<RequestTrace>& traces);

}  // namespace slotserve::bench
