#include "bench/loadgen/streaming_request.h"

#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "bench/timing.h"

namespace slotserve::bench {

absl::Status RunStreamingRequest(v1::SlotServe::Stub& stub, const StreamingRequestSpec& spec,
                                 RequestTrace& trace) {
  v1::GenerateRequest request;
  request.set_request_id(spec.request_id);
  for (int32_t id : spec.prompt_ids) request.mutable_token_ids()->add_ids(id);
  request.mutable_sampling()->set_temperature(0);  // greedy: the same work in every run
  request.mutable_stopping()->set_max_new_tokens(spec.new_tokens);
  request.mutable_stopping()->set_ignore_eos(true);

  grpc::ClientContext context;
  trace.submitted = NowSeconds();
  std::unique_ptr<grpc::ClientReader<v1::GenerateResponse>> reader =
      stub.Generate(&context, request);
  v1::GenerateResponse response;
  bool finished = false;
  while (reader->Read(&response)) {
    const double now = NowSeconds();
    if (response.has_tokens()) {
      for (int i = 0; i < response.tokens().ids_size(); ++i) trace.token_times.push_back(now);
    } else if (response.has_finished()) {
      finished = true;
    }
  }
  trace.finished = NowSeconds();
  const grpc::Status status = reader->Finish();
  if (!status.ok()) {
    return absl::UnavailableError(absl::StrCat(spec.request_id, ": Generate failed with code ",
                                               static_cast<int>(status.error_code()), ": ",
                                               status.error_message()));
  }
  if (!finished) {
    return absl::DataLossError(
        absl::StrCat(spec.request_id, ": the stream ended without a finished event"));
  }
  if (static_cast<int>(trace.token_times.size()) != spec.new_tokens) {
    return absl::DataLossError(absl::StrCat(spec.request_id, ": got ", trace.token_times.size(),
                                            " tokens, expected ", spec.new_tokens,
                                            " (max_new_tokens with ignore_eos)"));
  }
  return absl::OkStatus();
}

}  // namespace slotserve::bench
