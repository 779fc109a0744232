// What a long prompt does to the streams decoding beside it (issue 16 item 3), from the
// token arrival times the clients recorded: the streams' median inter-token gap before the
// prompt arrived, the longest gap that overlaps the prompt's prefill, and their ratio.
#pragma once

#include <vector>

#include "bench/serving_stats.h"

namespace slotserve::bench {

struct LongPromptStall {
  double median_gap_s = 0;  // over the streams' gaps that ended before the prompt was sent
  double max_gap_s = 0;     // the longest gap overlapping [sent, first token of the prompt]
  double ratio = 0;         // max_gap_s / median_gap_s
  double ttft_s = 0;        // the long prompt's time to first token
  int gaps_in_window = 0;   // gaps that overlapped the prefill (0: the streams ended early)
};

// `streams`: the decoding requests' traces; `long_prompt`: the long prompt's trace (at least
// one token).
LongPromptStall MeasureLongPromptStall(const std::vector<RequestTrace>& streams,
                                       const RequestTrace& long_prompt);

}  // namespace slotserve::bench
