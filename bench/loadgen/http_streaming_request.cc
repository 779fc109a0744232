#include "bench/loadgen/http_streaming_request.h"

#include <httplib.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "bench/timing.h"

namespace slotserve::bench {

int CountTokenIds(const std::string& event) {
  const std::string key = "\"token_ids\":[";
  const size_t start = event.find(key);
  if (start == std::string::npos) return 0;
  const size_t open = start + key.size();
  const size_t close = event.find(']', open);
  if (close == std::string::npos || close == open) return 0;
  int ids = 1;
  for (size_t i = open; i < close; ++i) ids += event[i] == ',';
  return ids;
}

absl::Status RunHttpStreamingRequest(const std::string& host, int port,
                                     const StreamingRequestSpec& spec, RequestTrace& trace) {
  const std::string body = absl::StrCat(
      R"({"prompt":[)", absl::StrJoin(spec.prompt_ids, ","), R"(],"max_tokens":)", spec.new_tokens,
      R"(,"temperature":0,"ignore_eos":true,"stream":true,"return_token_ids":true})");
  httplib::Client client(host, port);
  client.set_read_timeout(600, 0);
  // The request goes out as headers then body: without this the body waits for the ACK of the
  // headers (Nagle), which the server delays (delayed ACK), adding up to 40 ms to every TTFT.
  client.set_tcp_nodelay(true);
  httplib::Request request;
  request.method = "POST";
  request.path = "/v1/completions";
  request.body = body;
  request.set_header("Content-Type", "application/json");
  request.set_header("X-Request-Id", spec.request_id);
  std::string pending;
  bool done = false;
  int status = 0;
  request.response_handler = [&](const httplib::Response& response) {
    status = response.status;
    return true;
  };
  request.content_receiver = [&](const char* data, size_t size, uint64_t, uint64_t) {
    const double now = NowSeconds();
    pending.append(data, size);
    size_t end;
    while ((end = pending.find("\n\n")) != std::string::npos) {
      const std::string event = pending.substr(0, end);
      pending.erase(0, end + 2);
      if (event == "data: [DONE]") {
        done = true;
      } else {
        for (int i = CountTokenIds(event); i > 0; --i) trace.token_times.push_back(now);
      }
    }
    return true;
  };
  trace.submitted = NowSeconds();
  const httplib::Result result = client.send(request);
  trace.finished = NowSeconds();
  if (!result) {
    return absl::UnavailableError(absl::StrCat(
        spec.request_id, ": POST /v1/completions failed: ", httplib::to_string(result.error())));
  }
  if (status != 200) {
    return absl::UnavailableError(
        absl::StrCat(spec.request_id, ": HTTP ", status, ": ", pending.substr(0, 300)));
  }
  if (!done) {
    return absl::DataLossError(absl::StrCat(spec.request_id, ": the stream ended without [DONE]"));
  }
  if (static_cast<int>(trace.token_times.size()) != spec.new_tokens) {
    return absl::DataLossError(absl::StrCat(spec.request_id, ": got ", trace.token_times.size(),
                                            " tokens, expected ", spec.new_tokens));
  }
  return absl::OkStatus();
}

}  // namespace slotserve::bench
