// slotserve-bench-long-prompt: how long a long prompt stalls the streams decoding beside it,
// through the public gRPC API (issue 16 item 3). Starts --streams streaming requests (short
// prompts, greedy, ignore_eos, --stream_tokens each), waits --warmup_s seconds while they decode,
// sends one --prompt_tokens prompt, and prints one Markdown table row: the streams' median
// inter-token gap before the prompt, the longest gap during its prefill, their ratio, and the
// prompt's time to first token.
//
//   slotserve-bench-long-prompt --server=127.0.0.1:50051 --streams=8 --prompt_tokens=4000
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/loadgen/long_prompt_stall.h"
#include "bench/loadgen/streaming_request.h"
#include "bench/synthetic_tokens.h"
#include "bench/timing.h"
#include "slotserve/v1/slotserve.grpc.pb.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "address of slotserve-server's gRPC API");
ABSL_FLAG(int, streams, 8, "requests decoding when the long prompt arrives");
ABSL_FLAG(int, stream_tokens, 2000, "tokens each stream generates (must outlast the prefill)");
ABSL_FLAG(double, warmup_s, 1.0, "seconds the streams decode before the prompt is sent");
ABSL_FLAG(int, prompt_tokens, 4000, "length of the long prompt (synthetic token ids)");
ABSL_FLAG(std::string, label, "", "first column of the row (the server's flags)");

namespace slotserve::bench {
namespace {

int Run() {
  auto channel =
      grpc::CreateChannel(absl::GetFlag(FLAGS_server), grpc::InsecureChannelCredentials());
  if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(60))) {
    std::cerr << "long-prompt: no connection to " << absl::GetFlag(FLAGS_server) << "\n";
    return 1;
  }
  auto stub = v1::SlotServe::NewStub(channel);
  grpc::ClientContext info_context;
  v1::ModelInfo info;
  if (!stub->GetModelInfo(&info_context, v1::GetModelInfoRequest(), &info).ok()) return 1;

  const int streams = absl::GetFlag(FLAGS_streams);
  std::vector<RequestTrace> traces(streams);
  std::vector<absl::Status> results(streams);
  std::vector<std::thread> threads;
  for (int i = 0; i < streams; ++i) {
    StreamingRequestSpec spec{.request_id = absl::StrCat("stream-", i),
                              .prompt_ids = SyntheticTokens(16, info.vocab_size(), 7 + i),
                              .new_tokens = absl::GetFlag(FLAGS_stream_tokens)};
    threads.emplace_back([&, spec = std::move(spec), i] {
      results[i] = RunStreamingRequest(*stub, spec, traces[i]);
    });
  }
  // A fixed wait for the streams to be admitted and decoding side by side: their traces are
  // only read after join(), so nothing here polls them.
  std::this_thread::sleep_for(std::chrono::duration<double>(absl::GetFlag(FLAGS_warmup_s)));

  StreamingRequestSpec long_spec{
      .request_id = "long-prompt",
      .prompt_ids = SyntheticTokens(absl::GetFlag(FLAGS_prompt_tokens), info.vocab_size(), 99),
      .new_tokens = 4};
  RequestTrace long_trace;
  const absl::Status long_result = RunStreamingRequest(*stub, long_spec, long_trace);
  for (auto& thread : threads) thread.join();
  if (!long_result.ok()) {
    std::cerr << "long-prompt: " << long_result.message() << "\n";
    return 1;
  }
  for (const absl::Status& result : results) {
    if (!result.ok()) {
      std::cerr << "long-prompt: " << result.message() << "\n";
      return 1;
    }
  }
  const LongPromptStall stall = MeasureLongPromptStall(traces, long_trace);
  if (stall.gaps_in_window == 0) {
    std::cerr << "long-prompt: the streams ended before the prefill did; raise "
                 "--stream_tokens\n";
    return 1;
  }
  std::cout << absl::StrFormat("| %s | %d | %d | %.2f | %.2f | %.1f | %.1f |\n",
                               absl::GetFlag(FLAGS_label), streams,
                               absl::GetFlag(FLAGS_prompt_tokens), stall.median_gap_s * 1e3,
                               stall.max_gap_s * 1e3, stall.ratio, stall.ttft_s * 1e3);
  return 0;
}

}  // namespace
}  // namespace slotserve::bench

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("slotserve-bench-long-prompt --server=HOST:PORT");
  absl::ParseCommandLine(argc, argv);
  return slotserve::bench::Run();
}
