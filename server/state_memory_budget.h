// Sizing the state pool from a memory budget (docs/ARCHITECTURE.md "A request's path":
// "--max-slots, or derived from a memory budget"), so an operator can say how much memory request
// states may take instead of working out how many states of this model fit in it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace slotserve::server {

// "16GiB", "512MiB", "1.5G", "300000000", "64kb": a decimal number and an optional unit,
// case-insensitive. Binary units: KiB/Ki/K, MiB/Mi/M, GiB/Gi/G, TiB/Ti/T (single letters are
// binary, as in Docker and the JVM); decimal units: KB, MB, GB, TB; B or none = bytes.
// INVALID_ARGUMENT saying what was expected otherwise; the result is > 0 and rounded down to
// whole bytes.
absl::StatusOr<int64_t> ParseByteSize(absl::string_view text);

// The number of request states a budget of `budget_bytes` holds for a model whose request
// state is `state_bytes_per_request`: every arena holds one state more than its slots (the
// padding slot padded decode batches write to), so slots = budget / state - 1. `max_slots`,
// when the operator also gave it, caps the result. INVALID_ARGUMENT naming --state-memory
// when not even one slot fits.
absl::StatusOr<int> SlotsForStateMemory(int64_t budget_bytes, int64_t state_bytes_per_request,
                                        std::optional<int> max_slots);

// "1.5 GiB", "260 KiB", "512 B": a byte count for log lines.
std::string FormatByteSize(int64_t bytes);

}  // namespace slotserve::server
