// Memory per request: the state bytes each attention kind holds for one request (the same at
// every context for ABC, RFA and Luna; the KV cache grows with the context for the softmax
// baseline), and the largest number of concurrent requests a memory budget holds. Computed
// from the loaded model and the kernels' state layouts, not timed.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "bench/result_table.h"
#include "models/language_model.h"

namespace slotserve::bench {

// Columns: model, kind, context, state_bytes_per_request, budget_gib, max_requests.
ResultTable MakeMemoryTable();

// One row per (context, budget). For the bounded kinds the bytes are the model's own
// state_bytes_per_request (what the server reports and the slot pool allocates); for a kind
// whose memory is the context (softmax) they are the KV cache a request at that context needs
// (the pool itself allocates max_context's worth per slot): models::StateBytesAtContext.
absl::Status AddMemoryRows(const std::string& name, const models::LanguageModel& model,
                           const std::vector<int>& contexts, const std::vector<double>& budgets_gib,
                           ResultTable& table);

}  // namespace slotserve::bench
