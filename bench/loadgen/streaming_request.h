// One streaming Generate call as the load generator makes it: sends token ids, records when
// each generated token arrives, and checks the stream ends with a Finished event.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "bench/serving_stats.h"
#include "slotserve/v1/slotserve.grpc.pb.h"

namespace slotserve::bench {

struct StreamingRequestSpec {
  std::string request_id;
  std::vector<int32_t> prompt_ids;
  int new_tokens = 64;  // max_new_tokens, with ignore_eos so every request generates them all
};

// Runs the call to completion; `trace` gets the send time, one entry per generated token and
// the finish time (all NowSeconds()). Fails with the RPC's status, or when the stream ends
// without a Finished event or with fewer tokens than asked for.
absl::Status RunStreamingRequest(v1::SlotServe::Stub& stub, const StreamingRequestSpec& spec,
                                 RequestTrace& trace);

}  // namespace slotserve::bench
