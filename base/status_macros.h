// Early-return helpers for absl::Status / absl::StatusOr, which absl does not export.
#pragma once

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define SLOTSERVE_STATUS_CONCAT_INNER(a, b) a##b
#define SLOTSERVE_STATUS_CONCAT(a, b) SLOTSERVE_STATUS_CONCAT_INNER(a, b)

// Returns the status from the enclosing function when `expr` is not OK.
#define SLOTSERVE_RETURN_IF_ERROR(expr)                    \
  do {                                                     \
    ::absl::Status slotserve_status_ = (expr);             \
    if (!slotserve_status_.ok()) return slotserve_status_; \
  } while (false)

// `lhs = value of expr`, or returns its status from the enclosing function.
#define SLOTSERVE_ASSIGN_OR_RETURN(lhs, expr) \
  SLOTSERVE_ASSIGN_OR_RETURN_IMPL(SLOTSERVE_STATUS_CONCAT(slotserve_statusor_, __LINE__), lhs, expr)

#define SLOTSERVE_ASSIGN_OR_RETURN_IMPL(statusor, lhs, expr) \
  auto statusor = (expr);                                    \
  if (!statusor.ok()) return std::move(statusor).status();   \
  lhs = std::move(statusor).value()
