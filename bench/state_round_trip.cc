#include "bench/state_round_trip.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status_macros.h"
#include "engine/state_blob.h"

namespace slotserve::bench {
namespace {

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double MicrosSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

ResultTable MakeStateRoundTripTable() {
  return ResultTable("session export + import, the operation (medians, microseconds)",
                     {"model", "kind", "context", "blob_bytes", "signed", "save_us", "export_us",
                      "import_us", "restore_us", "round_trip_us"});
}

absl::Status AddStateRoundTripRows(BenchModel& model, int context, int repeats,
                                   ResultTable& table) {
  SLOTSERVE_RETURN_IF_ERROR(model.GrowPristineContext(context));
  models::StateArena& states = model.states();
  const int pristine = states.num_slots() - 1;
  std::vector<uint8_t> probe;
  SLOTSERVE_RETURN_IF_ERROR(states.Save(pristine, &probe));
  // Weights and fingerprint do not change the cost; the identity only has to match itself.
  const engine::StateBlobIdentity identity{.attention_kind = model.kind(),
                                           .payload_bytes = static_cast<int64_t>(probe.size()),
                                           .max_tokens = 1 << 30};
  for (const std::string& key : {std::string(), std::string(32, 'k')}) {
    std::vector<double> save, exported, imported, restore, total;
    size_t blob_bytes = 0;
    for (int i = 0; i < repeats; ++i) {
      const auto start = std::chrono::steady_clock::now();
      engine::RequestState state;
      state.token_count = states.position(pristine);
      SLOTSERVE_RETURN_IF_ERROR(states.Save(pristine, &state.payload));
      save.push_back(MicrosSince(start));
      auto step = std::chrono::steady_clock::now();
      const std::vector<uint8_t> blob = engine::ExportStateBlob(state, identity, key);
      exported.push_back(MicrosSince(step));
      step = std::chrono::steady_clock::now();
      SLOTSERVE_ASSIGN_OR_RETURN(engine::RequestState back,
                                 engine::ImportStateBlob(blob, identity, key));
      imported.push_back(MicrosSince(step));
      step = std::chrono::steady_clock::now();
      SLOTSERVE_RETURN_IF_ERROR(states.Restore(0, back.payload));
      restore.push_back(MicrosSince(step));
      total.push_back(MicrosSince(start));
      blob_bytes = blob.size();
    }
    table.NewRow()
        .Add(model.name())
        .Add(model.kind())
        .Add(context)
        .Add(static_cast<long long>(blob_bytes))
        .Add(key.empty() ? "no" : "yes")
        .Add(Median(save), 1)
        .Add(Median(exported), 1)
        .Add(Median(imported), 1)
        .Add(Median(restore), 1)
        .Add(Median(total), 1);
  }
  return absl::OkStatus();
}

}  // namespace slotserve::bench
