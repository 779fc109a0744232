// slotserve-bench-loadgen: end-to-end serving load through the public gRPC API, or with
// --protocol=http through the OpenAI-compatible HTTP API, vLLM benchmark_serving style. Sends
// --requests streaming requests (token-id prompts, greedy, ignore_eos, --new_tokens each: gRPC
// Generate calls, or POST /v1/completions with "stream": true) with Poisson arrivals at --rate
// requests/s, or all at once with --rate=0 (a fixed-concurrency burst), and reports TTFT,
// inter-token latency percentiles and throughput as one table row, appended to --out_csv.
//
//   slotserve-bench-loadgen --server=127.0.0.1:50051 --requests=32 --rate=0 --out_csv=f.csv
//   slotserve-bench-loadgen --server=127.0.0.1:50051 --protocol=http --http_server=127.0.0.1:8000
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <iostream>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "bench/loadgen/arrival_schedule.h"
#include "bench/loadgen/http_streaming_request.h"
#include "bench/loadgen/streaming_request.h"
#include "bench/result_table.h"
#include "bench/serving_stats.h"
#include "bench/synthetic_tokens.h"
#include "bench/timing.h"
#include "slotserve/v1/slotserve.grpc.pb.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051",
          "host:port of slotserve-server's gRPC API (GetModelInfo, and the load with grpc)");
ABSL_FLAG(std::string, protocol, "grpc", "grpc (Generate calls) or http (/v1/completions)");
ABSL_FLAG(std::string, http_server, "",
          "host:port of the server's --http-listen address (with --protocol=http)");
ABSL_FLAG(int, requests, 32, "requests to send");
ABSL_FLAG(double, rate, 0, "Poisson arrival rate in requests/s; 0 sends them all at once");
ABSL_FLAG(int, prompt_tokens, 16, "prompt length of every request (synthetic token ids)");
ABSL_FLAG(int, new_tokens, 64, "tokens every request generates (max_new_tokens, ignore_eos)");
ABSL_FLAG(uint64_t, seed, 1, "seed of the arrival times and prompts");
ABSL_FLAG(int, wait_ready_s, 60, "how long to wait for the server to answer GetModelInfo");
ABSL_FLAG(std::string, out_csv, "", "CSV file the result row is appended to (header if new)");

namespace slotserve::bench {
namespace {

absl::StatusOr<v1::ModelInfo> WaitForServer(v1::SlotServe::Stub& stub, int wait_s) {
  const double give_up = NowSeconds() + wait_s;
  grpc::Status status;
  while (true) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
    v1::ModelInfo info;
    status = stub.GetModelInfo(&context, v1::GetModelInfoRequest(), &info);
    if (status.ok()) return info;
    if (NowSeconds() > give_up) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return absl::UnavailableError(absl::StrCat(absl::GetFlag(FLAGS_server), ": no answer to ",
                                             "GetModelInfo within ", wait_s,
                                             " s: ", status.error_message()));
}

absl::Status Run() {
  const int requests = absl::GetFlag(FLAGS_requests);
  const double rate = absl::GetFlag(FLAGS_rate);
  const int prompt_tokens = absl::GetFlag(FLAGS_prompt_tokens);
  const int new_tokens = absl::GetFlag(FLAGS_new_tokens);
  if (requests <= 0 || rate < 0 || prompt_tokens <= 0 || new_tokens <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "need --requests > 0, --rate >= 0, --prompt_tokens > 0 and --new_tokens > 0, got ",
        requests, ", ", rate, ", ", prompt_tokens, " and ", new_tokens));
  }
  const std::string protocol = absl::GetFlag(FLAGS_protocol);
  const std::string http_server = absl::GetFlag(FLAGS_http_server);
  std::string http_host;
  int http_port = 0;
  if (protocol == "http") {
    const size_t colon = http_server.rfind(':');
    if (colon == std::string::npos ||
        !absl::SimpleAtoi(http_server.substr(colon + 1), &http_port)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--protocol=http needs --http_server=host:port, got \"", http_server, "\""));
    }
    http_host = http_server.substr(0, colon);
  } else if (protocol != "grpc") {
    return absl::InvalidArgumentError(
        absl::StrCat("--protocol must be grpc or http, got \"", protocol, "\""));
  }
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateChannel(absl::GetFlag(FLAGS_server), grpc::InsecureChannelCredentials());
  std::unique_ptr<v1::SlotServe::Stub> stub = v1::SlotServe::NewStub(channel);
  SLOTSERVE_ASSIGN_OR_RETURN(v1::ModelInfo info,
                             WaitForServer(*stub, absl::GetFlag(FLAGS_wait_ready_s)));

  const uint64_t seed = absl::GetFlag(FLAGS_seed);
  const std::vector<double> offsets = ArrivalOffsets(requests, rate, seed);
  std::vector<RequestTrace> traces(requests);
  std::vector<absl::Status> results(requests);
  std::vector<std::thread> threads;
  const double start = NowSeconds();
  for (int i = 0; i < requests; ++i) {
    const double wait = start + offsets[i] - NowSeconds();
    if (wait > 0) std::this_thread::sleep_for(std::chrono::duration<double>(wait));
    StreamingRequestSpec spec;
    spec.request_id = absl::StrCat("loadgen-", seed, "-", i);
    spec.prompt_ids = SyntheticTokens(prompt_tokens, info.vocab_size(), seed * 100003 + i);
    spec.new_tokens = new_tokens;
    threads.emplace_back([&, spec = std::move(spec), &trace = traces[i], &result = results[i]] {
      result = protocol == "http" ? RunHttpStreamingRequest(http_host, http_port, spec, trace)
                                  : RunStreamingRequest(*stub, spec, trace);
    });
  }
  for (auto& thread : threads) thread.join();

  int failed = 0;
  std::vector<RequestTrace> completed;
  for (int i = 0; i < requests; ++i) {
    if (results[i].ok()) {
      completed.push_back(traces[i]);
    } else {
      ++failed;
      if (failed <= 3) std::cerr << "loadgen: " << results[i].message() << "\n";
    }
  }
  const ServingStats stats = SummarizeTraces(completed);
  ResultTable table(
      absl::StrCat(protocol == "http" ? "HTTP" : "gRPC", " streaming, ", requests, " requests, ",
                   rate > 0 ? absl::StrCat("Poisson ", rate, " req/s") : "all at once"),
      {"model", "kind", "request_rate", "requests", "prompt_tokens", "new_tokens",
       "steady_tokens_per_s", "overall_tokens_per_s", "ttft_ms_p50", "ttft_ms_p90", "ttft_ms_p99",
       "itl_ms_p50", "itl_ms_p90", "itl_ms_p99", "failed"});
  table.NewRow()
      .Add(info.model())
      .Add(info.attention_kind())
      .Add(rate, 2)
      .Add(requests)
      .Add(prompt_tokens)
      .Add(new_tokens)
      .Add(stats.steady_tokens_per_s, 1)
      .Add(stats.overall_tokens_per_s, 1)
      .Add(stats.ttft_p50_s * 1e3, 3)
      .Add(stats.ttft_p90_s * 1e3, 3)
      .Add(stats.ttft_p99_s * 1e3, 3)
      .Add(stats.itl_p50_s * 1e3, 3)
      .Add(stats.itl_p90_s * 1e3, 3)
      .Add(stats.itl_p99_s * 1e3, 3)
      .Add(failed);
  table.Print(std::cout);
  const std::string out = absl::GetFlag(FLAGS_out_csv);
  if (!out.empty()) {
    SLOTSERVE_RETURN_IF_ERROR(table.AppendCsv(out));
  }
  if (failed > 0) {
    return absl::UnavailableError(absl::StrCat(failed, " of ", requests, " requests failed"));
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace slotserve::bench

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("streaming gRPC or HTTP load against slotserve-server");
  absl::ParseCommandLine(argc, argv);
  if (absl::Status status = slotserve::bench::Run(); !status.ok()) {
    std::cerr << "slotserve-bench-loadgen: " << status.message() << "\n";
    return 1;
  }
  return 0;
}
