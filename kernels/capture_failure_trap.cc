#include "kernels/capture_failure_trap.h"

#include "absl/strings/str_cat.h"

namespace slotserve::kernels {
namespace {

thread_local CaptureFailureTrap* current_trap = nullptr;

}  // namespace

CaptureFailureTrap::CaptureFailureTrap() : outer_(current_trap) { current_trap = this; }

CaptureFailureTrap::~CaptureFailureTrap() { current_trap = outer_; }

absl::Status CaptureFailureTrap::status() const {
  if (failures_ == 0) return absl::OkStatus();
  return absl::InternalError(
      failures_ == 1 ? first_failure_
                     : absl::StrCat(first_failure_, " (and ", failures_ - 1, " more after it)"));
}

bool CaptureFailureTrap::Record(const std::string& failure) {
  if (current_trap == nullptr) return false;
  if (current_trap->failures_++ == 0) current_trap->first_failure_ = failure;
  return true;
}

}  // namespace slotserve::kernels
