#include "bench/memory_table.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "models/attention_kind.h"

namespace slotserve::bench {

ResultTable MakeMemoryTable() {
  return ResultTable(
      "memory per request and requests per memory budget",
      {"model", "kind", "context", "state_bytes_per_request", "budget_gib", "max_requests"});
}

absl::Status AddMemoryRows(const std::string& name, const models::LanguageModel& model,
                           const std::vector<int>& contexts, const std::vector<double>& budgets_gib,
                           ResultTable& table) {
  const models::ModelConfig& config = model.config();
  for (int context : contexts) {
    if (context <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("memory: contexts must be > 0, got ", context));
    }
    const int64_t bytes = models::StateBytesAtContext(config, context);
    for (double budget : budgets_gib) {
      const double budget_bytes = budget * 1024.0 * 1024.0 * 1024.0;
      table.NewRow()
          .Add(name)
          .Add(models::AttentionKindName(config.attention.kind))
          .Add(context)
          .Add(static_cast<long long>(bytes))
          .Add(budget, 2)
          .Add(static_cast<long long>(std::floor(budget_bytes / bytes)));
    }
  }
  return absl::OkStatus();
}

}  // namespace slotserve::bench
