#include "server/generation_gateway.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace slotserve::server {

GenerationGateway::GenerationGateway(engine::Scheduler& scheduler, ServerMetrics* metrics)
    : scheduler_(scheduler), metrics_(metrics) {}

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
    std::vector<engine::Submission> submissions, size_t* refused) {
  absl::StatusOr<std::vector<engine::RequestId>> ids =
      scheduler_.SubmitAll(std::move(submissions), refused);
  if (!ids.ok()) CountRefusal(ids.status());
  return ids;
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
