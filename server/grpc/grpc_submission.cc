#include "server/grpc/grpc_submission.h"

#include <utility>

#include "engine/sampling_defaults.h"
#include "server/grpc/proto_field_names.h"
#include "server/grpc/request_parsing.h"
#include "server/grpc/source_parsing.h"

namespace slotserve::server {

absl::Time DeadlineFromGrpc(std::chrono::system_clock::time_point deadline) {
  if (deadline == std::chrono::system_clock::time_point::max()) return absl::InfiniteFuture();
  return absl::FromChrono(deadline);
}

CallTimes CallTimesOf(const grpc::CallbackServerContext& context) {
  return {std::chrono::system_clock::now(), context.deadline()};
}

bool ClientDeadlineReached(const CallTimes& times, std::chrono::system_clock::time_point now) {
  if (times.deadline == std::chrono::system_clock::time_point::max()) return false;
  const auto slack = (times.deadline - times.started) / 100 + std::chrono::milliseconds(5);
  return now >= times.deadline - slack;
}

void CancelForClient(GenerationGateway& gateway, engine::RequestId id, const CallTimes& times) {
  if (ClientDeadlineReached(times, std::chrono::system_clock::now())) return;
  gateway.Cancel(id);
}

absl::StatusOr<engine::RequestId> SubmitGenerateRequest(
    GenerationGateway& gateway, const v1::GenerateRequest& request,
    std::chrono::system_clock::time_point deadline, std::shared_ptr<engine::GenerationSink> sink,
    std::string* request_id) {
  const engine::Scheduler& scheduler = gateway.scheduler();
  absl::StatusOr<engine::GenerationRequest> parsed = ParseGenerateRequest(
      request, scheduler.tokenizer(), scheduler.model_config().bos_id, DeadlineFromGrpc(deadline));
  if (parsed.ok()) {
    engine::ApplySamplingDefaults(scheduler.options().sampling_defaults,
                                  SampledFieldsOf(request.sampling()), &*parsed);
    if (absl::Status source =
            ParseSource(request, scheduler.tokenizer(), scheduler.model_config().eos_id, &*parsed);
        !source.ok()) {
      parsed = std::move(source);
    }
  }
  if (!parsed.ok()) {
    gateway.CountRefusal(parsed.status());
    return parsed.status();
  }
  absl::StatusOr<engine::RequestId> id =
      gateway.SubmitParsed(*std::move(parsed), std::move(sink), request_id);
  if (!id.ok()) return WithProtoFieldNames(id.status(), request);
  return id;
}

}  // namespace slotserve::server
