#include "engine/ending_status.h"

#include "absl/strings/str_cat.h"

namespace slotserve::engine {

absl::Status CancelledStatus() { return absl::CancelledError("the request was cancelled"); }

absl::Status DeadlineStatus(const ActiveRequest& request, absl::Time now) {
  return absl::DeadlineExceededError(absl::StrCat(
      "the request's deadline passed after ", request.generated(), " generated tokens (",
      absl::FormatDuration(now - request.submitted()), " after it arrived)"));
}

absl::Status ShutdownStatus() {
  return absl::UnavailableError("the server shut down before the request finished");
}

absl::Status ModelError(const char* what, const absl::Status& status) {
  return absl::Status(
      status.code() == absl::StatusCode::kOk ? absl::StatusCode::kInternal : status.code(),
      absl::StrCat("model ", what, " failed: ", status.message()));
}

}  // namespace slotserve::engine
