#include "engine/generation_events.h"

namespace slotserve::engine {

std::string_view FinishReasonName(FinishReason reason) {
  switch (reason) {
    case FinishReason::kLength:
      return "length";
    case FinishReason::kEos:
      return "eos";
    case FinishReason::kStopToken:
      return "stop_token";
    case FinishReason::kStopSequence:
      return "stop_sequence";
    case FinishReason::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

std::string_view OutcomeLabel(const Finished& finished) {
  switch (finished.status.code()) {
    case absl::StatusCode::kOk:
      return FinishReasonName(finished.reason);
    case absl::StatusCode::kCancelled:
      return "cancelled";
    case absl::StatusCode::kDeadlineExceeded:
      return "deadline_exceeded";
    case absl::StatusCode::kUnavailable:
      return "shutdown";
    default:
      return "error";
  }
}

}  // namespace slotserve::engine
