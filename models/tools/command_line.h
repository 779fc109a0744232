// Small pieces shared by the model command-line tools (header-only so that each tool stays one
// executable target): the --backend flag and one-line error messages.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "kernels/backend.h"

namespace slotserve::models {

inline absl::StatusOr<kernels::Backend> ParseBackendFlag(const std::string& name) {
  if (name == "reference") return kernels::Backend::kReference;
  if (name == "cpu") return kernels::Backend::kCpu;
  if (name == "cuda") return kernels::Backend::kCuda;
  return absl::InvalidArgumentError(
      absl::StrCat("--backend must be reference, cpu or cuda, got \"", name, "\""));
}

// The status message on one line, whatever it holds: tools report errors as exactly one line.
inline std::string OneLineMessage(const absl::Status& status) {
  return absl::StrReplaceAll(status.message(), {{"\r", " "}, {"\n", " "}});
}

}  // namespace slotserve::models
