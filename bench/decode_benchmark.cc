#include "bench/decode_benchmark.h"

#include <algorithm>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace slotserve::bench {
namespace {

absl::Status MeasureDecodePoint(BenchModel& model, int batch, int context,
                                const DecodeOptions& options, ResultTable& table) {
  if (batch > model.batch_slots()) {
    return absl::InvalidArgumentError(absl::StrCat(model.name(), ": batch ", batch, " exceeds the ",
                                                   model.batch_slots(), " slots allocated for it"));
  }
  SLOTSERVE_RETURN_IF_ERROR(model.GrowPristineContext(context));
  absl::StatusOr<Timing> timing = TimeRepeats(
      options.plan, options.steps_per_repeat, [&] { return model.CopyPristineToBatch(batch); },
      [&]() -> absl::Status {
        for (int step = 0; step < options.steps_per_repeat; ++step) {
          SLOTSERVE_RETURN_IF_ERROR(model.Step(batch));
        }
        return absl::OkStatus();
      });
  SLOTSERVE_RETURN_IF_ERROR(timing.status());
  // The steps of one repeat run at contexts context .. context + steps - 1; quote the middle.
  const int mean_context = context + (options.steps_per_repeat - 1) / 2;
  const double flops_per_token =
      model.MatmulFlopsPerToken() + model.AttentionFlopsPerToken(mean_context);
  table.NewRow()
      .Add(model.name())
      .Add(model.kind())
      .Add(batch)
      .Add(context)
      .Add(timing->median * 1e3, 4)
      .Add(timing->p10 * 1e3, 4)
      .Add(timing->p90 * 1e3, 4)
      .Add(batch / timing->median, 1)
      .Add(flops_per_token * batch / timing->median / 1e9, 3);
  return absl::OkStatus();
}

bool FitsContext(BenchModel& model, int context, int steps) {
  return static_cast<int64_t>(context) + steps <= model.model().max_positions();
}

}  // namespace

ResultTable MakeDecodeTable(const std::string& title) {
  return ResultTable(title, {"model", "kind", "batch", "context", "step_ms", "step_ms_p10",
                             "step_ms_p90", "tokens_per_s", "model_gflop_per_s"});
}

absl::Status RunBatchSweep(BenchModel& model, const std::vector<int>& batches, int context,
                           const DecodeOptions& options, ResultTable& table) {
  if (!FitsContext(model, context, options.steps_per_repeat)) {
    return absl::InvalidArgumentError(
        absl::StrCat(model.name(), ": context ", context, " plus ", options.steps_per_repeat,
                     " steps exceeds the model's ", model.model().max_positions(), " positions"));
  }
  for (int batch : batches) {
    if (absl::Status status = MeasureDecodePoint(model, batch, context, options, table);
        !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

absl::Status RunContextSweep(BenchModel& model, const std::vector<int>& contexts, int batch,
                             const DecodeOptions& options, ResultTable& table) {
  std::vector<int> sorted = contexts;  // ascending, so the pristine context only ever grows
  std::sort(sorted.begin(), sorted.end());
  for (int context : sorted) {
    if (!FitsContext(model, context, options.steps_per_repeat)) {
      std::cerr << "note: " << model.name() << " skips context " << context << ": it holds at most "
                << model.model().max_positions() << " positions\n";
      continue;
    }
    if (absl::Status status = MeasureDecodePoint(model, batch, context, options, table);
        !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace slotserve::bench
