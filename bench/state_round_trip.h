// Export + import of one session, the operation itself (docs/ARCHITECTURE.md "Request state"; issue
// 14 item 6 (d)): a slot's state saved to host memory (StateArena::Save), written as a state blob
// (checksum, and an HMAC when signed), parsed and verified back (ImportStateBlob), and restored
// into a slot (StateArena::Restore). What ExportSession + ImportSession cost without gRPC around
// them.
#pragma once

#include "absl/status/status.h"
#include "bench/bench_model.h"
#include "bench/result_table.h"

namespace slotserve::bench {

// Columns: model, kind, context, blob_bytes, signed, save_us, export_us, import_us,
// restore_us, round_trip_us (medians).
ResultTable MakeStateRoundTripTable();

// Two rows (unsigned, signed) for the model's pristine context of `context` tokens; each time
// is the median of `repeats` runs.
absl::Status AddStateRoundTripRows(BenchModel& model, int context, int repeats, ResultTable& table);

}  // namespace slotserve::bench
