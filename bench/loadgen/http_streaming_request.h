// One streaming request of the load generator over the OpenAI-compatible HTTP API: POST
// /v1/completions with the same token-id prompt, greedy sampling, max_tokens and ignore_eos as
// the gRPC request (streaming_request.h), "stream": true and "return_token_ids": true, so each
// server-sent event says how many tokens it carries and every token's arrival is timed as on
// gRPC.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "bench/loadgen/streaming_request.h"
#include "bench/serving_stats.h"

namespace slotserve::bench {

// Runs the request on its own connection to `host`:`port`; `trace` as RunStreamingRequest.
// Fails on a non-200 answer, a stream without "data: [DONE]", or fewer tokens than asked for.
absl::Status RunHttpStreamingRequest(const std::string& host, int port,
                                     const StreamingRequestSpec& spec, RequestTrace& trace);

// How many ids a server-sent event's "token_ids":[...] holds (0 when it has none). A scan,
// not a JSON parse: the client shares the machine with the server it measures.
int CountTokenIds(const std::string& event);

}  // namespace slotserve::bench
