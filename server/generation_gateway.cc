#include "server/generation_gateway.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "server/request_parsing.h"
#include "server/source_parsing.h"

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

void GenerationGateway::CancelForClient(engine::RequestId id, const CallTimes& times) {
  if (ClientDeadlineReached(times, std::chrono::system_clock::now())) return;
  scheduler_.Cancel(id);
}

GenerationGateway::GenerationGateway(engine::Scheduler& scheduler, ServerMetrics* metrics)
    : scheduler_(scheduler), metrics_(metrics) {}

absl::StatusOr<engine::RequestId> GenerationGateway::Submit(
    const v1::GenerateRequest& request, std::chrono::system_clock::time_point deadline,
    std::shared_ptr<engine::GenerationSink> sink, std::string* request_id) {
  absl::StatusOr<engine::GenerationRequest> parsed =
      ParseGenerateRequest(request, scheduler_.tokenizer(), scheduler_.model_config().bos_id,
                           scheduler_.model_config().vocab_size, DeadlineFromGrpc(deadline));
  if (parsed.ok()) {
    engine::ApplySamplingDefaults(scheduler_.options().sampling_defaults,
                                  SampledFieldsOf(request.sampling()), &*parsed);
    if (absl::Status source =
            ParseSource(request, scheduler_.tokenizer(), scheduler_.model_config().eos_id,
                        scheduler_.model_config().vocab_size, &*parsed);
        !source.ok()) {
      parsed = std::move(source);
    }
  }
  if (!parsed.ok()) {
    CountRefusal(parsed.status());
    return parsed.status();
  }
  return SubmitParsed(*std::move(parsed), std::move(sink), request_id);
}

absl::StatusOr<engine::RequestId> GenerationGateway::SubmitParsed(
    engine::GenerationRequest request, std::shared_ptr<engine::GenerationSink> sink,
    std::string* request_id) {
  if (request.request_id.empty()) {
    request.request_id = absl::StrCat("req-", next_request_number_.fetch_add(1));
  }
  *request_id = request.request_id;
  absl::StatusOr<engine::RequestId> id = scheduler_.Submit(std::move(request), std::move(sink));
  if (!id.ok()) CountRefusal(id.status());
  return id;
}

absl::StatusOr<std::vector<engine::RequestId>> GenerationGateway::SubmitParsedAll(
    std::vector<engine::Submission> submissions) {
  absl::StatusOr<std::vector<engine::RequestId>> ids = scheduler_.SubmitAll(std::move(submissions));
  if (!ids.ok()) CountRefusal(ids.status());
  return ids;
}

absl::Status GenerationGateway::CheckParsed(const engine::GenerationRequest& request) {
  absl::Status checked = scheduler_.CheckRequest(request);
  if (!checked.ok()) CountRefusal(checked);
  return checked;
}

void GenerationGateway::CountRefusal(const absl::Status& status) {
  if (metrics_ != nullptr) metrics_->OnRequestRefused(status.code());
}

void GenerationGateway::CallStarted() {
  absl::MutexLock lock(&calls_mu_);
  ++calls_in_flight_;
}

void GenerationGateway::CallDone() {
  absl::MutexLock lock(&calls_mu_);
  --calls_in_flight_;
}

bool GenerationGateway::WaitForCallsDone(absl::Time deadline) {
  absl::MutexLock lock(&calls_mu_);
  auto none_left = [this]()
                       ABSL_EXCLUSIVE_LOCKS_REQUIRED(calls_mu_) { return calls_in_flight_ == 0; };
  return calls_mu_.AwaitWithDeadline(absl::Condition(&none_left), deadline);
}

}  // namespace slotserve::server
