#include "bench/scheduler_benchmark.h"

#include <memory>
#include <mutex>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "bench/serving_stats.h"
#include "bench/synthetic_tokens.h"
#include "bench/timing.h"
#include "engine/scheduler.h"
#include "models/language_model.h"

namespace slotserve::bench {
namespace {

// Records when each token arrives. The engine thread writes, the benchmark thread reads after
// WaitIdle; the mutex makes that hand-over explicit.
class TracingSink : public engine::GenerationSink {
 public:
  explicit TracingSink(double submitted) { trace_.submitted = submitted; }

  void OnTokens(const engine::TokenChunk& chunk) override {
    const double now = NowSeconds();
    std::lock_guard lock(mu_);
    for (size_t i = 0; i < chunk.ids.size(); ++i) trace_.token_times.push_back(now);
  }
  void OnFinished(const engine::Finished& finished) override {
    const double now = NowSeconds();
    std::lock_guard lock(mu_);
    trace_.finished = now;
    status_ = finished.status;
  }
  RequestTrace trace() const {
    std::lock_guard lock(mu_);
    return trace_;
  }
  absl::Status status() const {
    std::lock_guard lock(mu_);
    return status_;
  }

 private:
  mutable std::mutex mu_;
  RequestTrace trace_;
  absl::Status status_;
};

absl::StatusOr<ServingStats> RunRound(engine::Scheduler& scheduler, int vocab,
                                      const SchedulerBenchOptions& options, int round) {
  std::vector<std::shared_ptr<TracingSink>> sinks;
  for (int i = 0; i < options.concurrency; ++i) {
    engine::GenerationRequest request;
    request.request_id = absl::StrCat("bench-", round, "-", i);
    request.prompt_ids = SyntheticTokens(options.prompt_tokens, vocab, 1000 * round + i);
    request.sampling.temperature = 0;  // greedy: no sampling cost differences between runs
    request.stopping.max_new_tokens = options.new_tokens;
    request.stopping.ignore_eos = true;
    auto sink = std::make_shared<TracingSink>(NowSeconds());
    SLOTSERVE_RETURN_IF_ERROR(scheduler.Submit(std::move(request), sink).status());
    sinks.push_back(std::move(sink));
  }
  if (!scheduler.WaitIdle(absl::Now() + absl::Minutes(10))) {
    return absl::DeadlineExceededError("scheduler benchmark: requests still running after 10 min");
  }
  std::vector<RequestTrace> traces;
  for (const auto& sink : sinks) {
    if (!sink->status().ok()) return sink->status();
    traces.push_back(sink->trace());
  }
  return SummarizeTraces(traces);
}

}  // namespace

ResultTable MakeSchedulerTable() {
  return ResultTable("in-process engine (Scheduler, greedy, ignore_eos; no gRPC)",
                     {"model", "kind", "concurrency", "prompt_tokens", "new_tokens",
                      "steady_tokens_per_s", "overall_tokens_per_s", "ttft_ms_p50", "ttft_ms_p99",
                      "itl_ms_p50", "itl_ms_p90", "itl_ms_p99"});
}

absl::Status RunSchedulerPoint(const std::filesystem::path& model_dir, kernels::Backend backend,
                               const SchedulerBenchOptions& options, ResultTable& table) {
  SLOTSERVE_ASSIGN_OR_RETURN(std::unique_ptr<models::LanguageModel> model,
                             models::LanguageModel::Load(model_dir, backend));
  const models::ModelConfig config = model->config();
  engine::SchedulerOptions scheduler_options;
  scheduler_options.max_slots = options.concurrency;
  scheduler_options.max_queued = options.concurrency;
  scheduler_options.max_new_tokens_limit = std::max(options.new_tokens, 1);
  scheduler_options.default_max_new_tokens = scheduler_options.max_new_tokens_limit;
  SLOTSERVE_ASSIGN_OR_RETURN(
      std::unique_ptr<engine::Scheduler> scheduler,
      engine::Scheduler::Create(std::move(model), /*tokenizer=*/nullptr, scheduler_options));
  scheduler->Start();

  std::vector<ServingStats> rounds;
  for (int round = 0; round <= options.rounds; ++round) {  // round 0 is the warm-up
    SLOTSERVE_ASSIGN_OR_RETURN(ServingStats stats,
                               RunRound(*scheduler, config.vocab_size, options, round));
    if (round > 0) rounds.push_back(stats);
  }
  scheduler->Stop();

  auto median = [&](double ServingStats::*field) {
    std::vector<double> values;
    for (const ServingStats& stats : rounds) values.push_back(stats.*field);
    return Percentile(values, 50);
  };
  table.NewRow()
      .Add(model_dir.filename().string())
      .Add(models::AttentionKindName(config.attention.kind))
      .Add(options.concurrency)
      .Add(options.prompt_tokens)
      .Add(options.new_tokens)
      .Add(median(&ServingStats::steady_tokens_per_s), 1)
      .Add(median(&ServingStats::overall_tokens_per_s), 1)
      .Add(median(&ServingStats::ttft_p50_s) * 1e3, 3)
      .Add(median(&ServingStats::ttft_p99_s) * 1e3, 3)
      .Add(median(&ServingStats::itl_p50_s) * 1e3, 3)
      .Add(median(&ServingStats::itl_p90_s) * 1e3, 3)
      .Add(median(&ServingStats::itl_p99_s) * 1e3, 3);
  return absl::OkStatus();
}

}  // namespace slotserve::bench
