#include "server/generation_gateway.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "server/request_parsing.h"

namespace slotserve::server {

absl::Time DeadlineFromGrpc(std::chrono::system_clock::time_point deadline) {
  if (deadline == std::chrono::system_clock::time_point::max()) return absl::InfiniteFuture();
  return absl::FromChrono(deadline);
}

GenerationGateway::GenerationGateway(engine::Scheduler& scheduler, ServerMetrics* metrics)
    : scheduler_(scheduler), metrics_(metrics) {}

absl::StatusOr<engine::RequestId> GenerationGateway::Submit(
    const v1::GenerateRequest& request, std::chrono::system_clock::time_point deadline,
    std::shared_ptr<engine::GenerationSink> sink, std::string* request_id) {
  absl::StatusOr<engine::GenerationRequest> parsed =
      ParseGenerateRequest(request, scheduler_.tokenizer(), scheduler_.model_config().bos_id,
                           scheduler_.model_config().vocab_size, DeadlineFromGrpc(deadline));
  absl::StatusOr<engine::RequestId> id = absl::UnknownError("not submitted");
  if (parsed.ok()) {
    if (parsed->request_id.empty()) {
      parsed->request_id = absl::StrCat("req-", next_request_number_.fetch_add(1));
    }
    *request_id = parsed->request_id;
    id = scheduler_.Submit(*std::move(parsed), std::move(sink));
  } else {
    id = parsed.status();
  }
  if (!id.ok() && metrics_ != nullptr) metrics_->OnRequestRefused(id.status().code());
  return id;
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
