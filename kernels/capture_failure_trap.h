// Turns a failing CUDA call inside a graph capture into an error the capture returns, instead
// of the abort the CUDA checks (kernels/cuda/cuda_check.cuh) give everywhere else. Why: a call
// that is legal when run but not while captured (a synchronising copy, an allocation the
// capture mode refuses) made the whole server abort on the first decode step; with the trap
// the step graph cache reports the failure and runs the step without a graph. Plain C++ with
// one thread-local pointer, so it is unit-tested without a GPU.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace slotserve::kernels {

class CaptureFailureTrap {
 public:
  // Installs the trap on this thread for its lifetime (an inner trap shadows an outer one).
  CaptureFailureTrap();
  ~CaptureFailureTrap();
  CaptureFailureTrap(const CaptureFailureTrap&) = delete;
  CaptureFailureTrap& operator=(const CaptureFailureTrap&) = delete;

  // OK, or INTERNAL with the first failure recorded while installed and how many followed.
  absl::Status status() const;

  // For the CUDA checks: records `failure` in this thread's trap and returns true, or returns
  // false when no trap is installed (the caller then aborts, as before).
  static bool Record(const std::string& failure);

 private:
  CaptureFailureTrap* const outer_;
  std::string first_failure_;
  int failures_ = 0;
};

}  // namespace slotserve::kernels
