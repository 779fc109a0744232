#include "clients/cli/commands.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iterator>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "clients/cli/generation_printer.h"
#include "clients/cli/request_flags.h"
#include "clients/cli/rpc_errors.h"
#include "clients/cli/source_flags.h"
#include "google/protobuf/util/json_util.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "slotserve/v1/slotserve.grpc.pb.h"

namespace slotserve::clients {
namespace {

// The per-call settings every RPC gets: the deadline and the API key.
void PrepareCall(const CliContext& context, grpc::ClientContext* call) {
  if (!context.api_key.empty()) call->AddMetadata("authorization", "Bearer " + context.api_key);
  if (context.timeout > absl::ZeroDuration()) {
    call->set_deadline(std::chrono::system_clock::now() +
                       absl::ToChronoMilliseconds(context.timeout));
  }
}

void PrintJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(message, &json, options);
  std::printf("%s\n", json.c_str());
  std::fflush(stdout);
}

int Fail(const grpc::Status& status, const CliContext& context) {
  std::fprintf(stderr, "slotserve-cli: %s\n", DescribeRpcFailure(status, context.server).c_str());
  return 1;
}

// The same after text was streamed: on a line of its own.
int Fail(const grpc::Status& status, const CliContext& context, GenerationPrinter& printer) {
  printer.StderrLine(
      absl::StrFormat("slotserve-cli: %s", DescribeRpcFailure(status, context.server)));
  return 1;
}

// Flag mistakes are usage errors (exit 2), not server failures.
std::optional<v1::GenerateRequest> RequestOrUsageError(const std::string& prompt) {
  absl::StatusOr<v1::GenerateRequest> request = BuildGenerateRequest(prompt);
  if (!request.ok()) {
    std::fprintf(stderr, "slotserve-cli: %s\n", std::string(request.status().message()).c_str());
    return std::nullopt;
  }
  return *std::move(request);
}

const char* FinishReasonText(v1::FinishReason reason) {
  switch (reason) {
    case v1::FINISH_REASON_LENGTH:
      return "length";
    case v1::FINISH_REASON_EOS:
      return "eos";
    case v1::FINISH_REASON_STOP_SEQUENCE:
      return "stop sequence";
    case v1::FINISH_REASON_CANCELLED:
      return "cancelled";
    default:
      return "unspecified";
  }
}

// "[length after 20 tokens (prompt 4), seed 7, first token 0.012 s, total 0.100 s]", plus
// ", session <handle>" when the final state was kept.
std::string Summary(const v1::Finished& finished) {
  std::string summary = absl::StrFormat(
      "[%s after %u tokens (prompt %u), seed %llu, first token %.3f s, total %.3f s",
      FinishReasonText(finished.finish_reason()), finished.generated_tokens(),
      finished.prompt_tokens(), static_cast<unsigned long long>(finished.seed()),
      finished.timings().first_token_seconds(), finished.timings().total_seconds());
  if (!finished.session_handle().empty()) {
    absl::StrAppend(&summary, ", session ", finished.session_handle());
  }
  return summary + "]";
}

// Several choices (--n) cannot share one stream of text: each is gathered and printed whole,
// after a "[choice i]" line on stderr, with its own summary.
void PrintChoices(const std::map<uint32_t, std::string>& texts,
                  const std::map<uint32_t, v1::Finished>& ends, bool quiet,
                  GenerationPrinter& printer) {
  for (const auto& [index, text] : texts) {
    printer.StderrLine(absl::StrFormat("[choice %u]", index));
    printer.Text(text);
    if (!quiet && ends.contains(index)) printer.StderrLine(Summary(ends.at(index)));
  }
}

// A beam search's n-best, best first: each after a "[hypothesis i: score ...]" line on stderr,
// its text on stdout (as --n prints its choices).
void PrintHypotheses(const v1::Finished& finished, GenerationPrinter& printer) {
  for (int i = 0; i < finished.hypotheses_size(); ++i) {
    const v1::Hypothesis& hypothesis = finished.hypotheses(i);
    printer.StderrLine(
        absl::StrFormat("[hypothesis %d: score %.6f, logprob sum %.6f, %d tokens, %s]", i,
                        hypothesis.score(), hypothesis.logprob_sum(), hypothesis.ids_size(),
                        FinishReasonText(hypothesis.finish_reason())));
    printer.Text(hypothesis.text());
  }
}

bool IsBeamSearch(const v1::GenerateRequest& request) { return request.beam().width() > 1; }

}  // namespace

int RunGenerate(const CliContext& context, const std::string& prompt) {
  std::optional<v1::GenerateRequest> request = RequestOrUsageError(prompt);
  if (!request) return 2;
  std::unique_ptr<v1::SlotServe::Stub> stub = v1::SlotServe::NewStub(context.channel);
  grpc::ClientContext call;
  PrepareCall(context, &call);
  std::unique_ptr<grpc::ClientReader<v1::GenerateResponse>> reader =
      stub->Generate(&call, *request);
  v1::GenerateResponse response;
  const bool several = request->n() > 1;
  // A beam's tokens arrive at the end as the best hypothesis, which the n-best list shows.
  const bool beam = IsBeamSearch(*request);
  std::map<uint32_t, std::string> texts;  // by choice, when several
  std::map<uint32_t, v1::Finished> ends;
  GenerationPrinter printer(stdout, stderr);
  while (reader->Read(&response)) {
    if (context.json) {
      PrintJson(response);
    } else if (response.has_tokens()) {
      if (several) {
        texts[response.tokens().choice_index()] += response.tokens().text();
      } else if (!beam) {
        printer.Text(response.tokens().text());
      }
    }
    if (response.has_finished()) {
      ends[response.finished().choice_index()] = response.finished();
      texts.try_emplace(response.finished().choice_index());
    }
  }
  grpc::Status status = reader->Finish();
  if (!context.json && several) PrintChoices(texts, ends, context.quiet, printer);
  if (!status.ok()) return Fail(status, context, printer);
  if (!context.json && beam && !ends.empty()) PrintHypotheses(ends.begin()->second, printer);
  if (!context.json && !context.quiet && !several && !ends.empty()) {
    printer.StderrLine(Summary(ends.begin()->second));
  }
  return 0;
}

int RunComplete(const CliContext& context, const std::string& prompt) {
  std::optional<v1::GenerateRequest> request = RequestOrUsageError(prompt);
  if (!request) return 2;
  std::unique_ptr<v1::SlotServe::Stub> stub = v1::SlotServe::NewStub(context.channel);
  grpc::ClientContext call;
  PrepareCall(context, &call);
  v1::CompleteResponse response;
  grpc::Status status = stub->Complete(&call, *request, &response);
  if (!status.ok()) return Fail(status, context);
  if (context.json) {
    PrintJson(response);
    return 0;
  }
  GenerationPrinter printer(stdout, stderr);
  if (IsBeamSearch(*request)) {
    PrintHypotheses(response.finished(), printer);
  } else {
    printer.Text(response.text());
  }
  if (!context.quiet) printer.StderrLine(Summary(response.finished()));
  return 0;
}

int RunInfo(const CliContext& context) {
  std::unique_ptr<v1::SlotServe::Stub> stub = v1::SlotServe::NewStub(context.channel);
  grpc::ClientContext call;
  PrepareCall(context, &call);
  v1::ModelInfo info;
  grpc::Status status = stub->GetModelInfo(&call, v1::GetModelInfoRequest(), &info);
  if (!status.ok()) return Fail(status, context);
  if (context.json) {
    PrintJson(info);
    return 0;
  }
  std::printf(
      "model:                   %s\n"
      "architecture:            %s\n"
      "attention:               %s (%d %s)\n"
      "vocab, d_model, layers, heads, d_ffn: %d, %d, %d, %d, %d\n"
      "state bytes per request: %lld\n"
      "state slots:             %d free of %d (%d running, %d queued)\n"
      "backend:                 %s\n"
      "limits:                  prompt <= %u tokens, max_new_tokens <= %u (default %u), "
      "n <= %u, beam width <= %u\n"
      "request state:           prefix block %u tokens, prefix cache %lld bytes, sessions "
      "%lld bytes (ttl %.0f s)\n",
      info.model().c_str(), info.architecture().c_str(), info.attention_kind().c_str(),
      info.attention_memory_size(), info.attention_memory_unit().c_str(), info.vocab_size(),
      info.d_model(), info.n_layers(), info.n_heads(), info.d_ffn(),
      static_cast<long long>(info.state_bytes_per_request()), info.slots_free(), info.slots_total(),
      info.requests_running(), info.requests_queued(), info.backend().c_str(),
      info.max_prompt_tokens(), info.max_new_tokens_limit(), info.default_max_new_tokens(),
      info.max_n(), info.max_beam_width(), info.prefix_block(),
      static_cast<long long>(info.prefix_cache_bytes_limit()),
      static_cast<long long>(info.session_memory_bytes_limit()), info.session_ttl_seconds());
  if (!info.attention_control().empty()) {  // abc: which memory control (docs/ABC_CONTROLS.md)
    const bool learned = !info.attention_control_activation().empty();
    std::printf("memory control:          %s%s%s%s\n", info.attention_control().c_str(),
                learned ? " (" : "", info.attention_control_activation().c_str(),
                learned ? ")" : "");
  }
  PrintSeq2seqInfo(info, stdout);
  return 0;
}

int RunHealth(const CliContext& context) {
  std::unique_ptr<grpc::health::v1::Health::Stub> stub =
      grpc::health::v1::Health::NewStub(context.channel);
  grpc::ClientContext call;
  PrepareCall(context, &call);
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status status = stub->Check(&call, grpc::health::v1::HealthCheckRequest(), &response);
  if (!status.ok()) return Fail(status, context);
  const std::string& name =
      grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status());
  if (context.json) {
    PrintJson(response);
  } else {
    std::printf("%s\n", name.c_str());
  }
  if (response.status() != grpc::health::v1::HealthCheckResponse::SERVING) {
    std::fprintf(stderr, "slotserve-cli: the server at %s is %s\n", context.server.c_str(),
                 name.c_str());
    return 1;
  }
  return 0;
}

int RunTokenize(const CliContext& context, const std::string& text) {
  std::unique_ptr<v1::SlotServe::Stub> stub = v1::SlotServe::NewStub(context.channel);
  grpc::ClientContext call;
  PrepareCall(context, &call);
  v1::TokenizeRequest request;
  request.set_text(text);
  v1::TokenizeResponse response;
  grpc::Status status = stub->Tokenize(&call, request, &response);
  if (!status.ok()) return Fail(status, context);
  if (context.json) {
    PrintJson(response);
    return 0;
  }
  for (int i = 0; i < response.ids_size(); ++i) {
    std::printf("%d\t%s\n", response.ids(i), response.pieces(i).c_str());
  }
  return 0;
}

int RunExportSession(const CliContext& context, const std::string& handle) {
  std::unique_ptr<v1::SlotServe::Stub> stub = v1::SlotServe::NewStub(context.channel);
  grpc::ClientContext call;
  PrepareCall(context, &call);
  v1::ExportSessionRequest request;
  request.set_handle(handle);
  v1::ExportSessionResponse response;
  grpc::Status status = stub->ExportSession(&call, request, &response);
  if (!status.ok()) return Fail(status, context);
  if (std::fwrite(response.state().data(), 1, response.state().size(), stdout) !=
          response.state().size() ||
      std::fflush(stdout) != 0) {
    std::fprintf(stderr, "slotserve-cli: writing the state to stdout failed\n");
    return 1;
  }
  if (!context.quiet) {
    std::fprintf(stderr, "[session %s: %zu bytes]\n", handle.c_str(), response.state().size());
  }
  return 0;
}

int RunImportSession(const CliContext& context, const std::string& state) {
  std::unique_ptr<v1::SlotServe::Stub> stub = v1::SlotServe::NewStub(context.channel);
  grpc::ClientContext call;
  PrepareCall(context, &call);
  v1::ImportSessionRequest request;
  request.set_state(state);
  v1::ImportSessionResponse response;
  grpc::Status status = stub->ImportSession(&call, request, &response);
  if (!status.ok()) return Fail(status, context);
  if (context.json) {
    PrintJson(response);
  } else {
    std::printf("%s\n", response.handle().c_str());
  }
  return 0;
}

}  // namespace slotserve::clients
