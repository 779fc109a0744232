// The Prometheus metrics of the README's metrics list, fed by the engine through EngineObserver
// (engine thread) and by the service for requests refused before the engine accepted them (gRPC
// threads). Every family has at least one series from start-up, so a scrape always shows it.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "engine/engine_observer.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "server/gateway_metrics.h"

namespace slotserve::server {

// What the slotserve_build_info series is labelled with.
struct BuildInfo {
  std::string version;
  std::string model;
  std::string attention_kind;
  std::string backend;
};

class ServerMetrics final : public engine::EngineObserver {
 public:
  ServerMetrics(const BuildInfo& build_info, int slots_total, int64_t state_bytes_per_request);

  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

  // A request the service or Scheduler::Submit refused: requests_total{outcome=<code name>}
  // ("invalid_argument", "resource_exhausted", "unavailable", ...).
  void OnRequestRefused(absl::StatusCode code);
  // A call refused for lacking a valid API key (--api-keys-file), by the front end that
  // refused it ("grpc" or "http"): unauthenticated_requests_total{api}. Kept apart from
  // requests_total, which counts generation requests, because any call (GetModelInfo too) can
  // be refused this way and a flood of bad keys should not read as the model failing.
  void OnUnauthenticated(std::string_view api);
  // An encoder-decoder model's two state parts (state_part_bytes_per_request{part}); until
  // called, the whole state is the decoder's and the cross memory 0.
  void SetStateParts(int64_t decoder_self_bytes, int64_t cross_memory_bytes);
  // The prefix cache's shape, for vllm:cache_config_info (gateway_metrics.h).
  void SetPrefixCacheConfig(int block_tokens, int64_t states) {
    gateway_.SetPrefixCacheConfig(block_tokens, states);
  }

  // engine::EngineObserver (engine thread).
  void OnRequestAdmitted(absl::Duration queue_time) override;
  void OnFirstToken(absl::Duration time_to_first_token) override;
  void OnInterTokenLatency(absl::Duration latency) override;
  void OnRequestFinished(const engine::Finished& finished) override;
  // Decode steps record their batch size (requests); prefill chunks are not batches.
  void OnStep(engine::StepPhase phase, int batch_size, absl::Duration duration) override;
  void OnStats(const engine::SchedulerStats& stats) override;
  void OnPrefixCacheStats(const engine::PrefixCacheStats& stats) override;
  void OnSessionStats(const engine::SessionStoreStats& stats) override;

 private:
  prometheus::Counter& RequestsWithOutcome(std::string_view outcome);
  prometheus::Counter& UnauthenticatedWithApi(std::string_view api);

  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& requests_total_;
  prometheus::Family<prometheus::Counter>& unauthenticated_requests_total_;
  prometheus::Counter& prompt_tokens_total_;
  prometheus::Counter& generated_tokens_total_;
  prometheus::Histogram& queue_time_seconds_;
  prometheus::Histogram& time_to_first_token_seconds_;
  prometheus::Histogram& inter_token_latency_seconds_;
  prometheus::Histogram& request_duration_seconds_;
  prometheus::Histogram& batch_size_;
  prometheus::Family<prometheus::Histogram>& step_duration_seconds_;
  prometheus::Histogram& prefill_step_seconds_;
  prometheus::Histogram& decode_step_seconds_;
  prometheus::Histogram& encode_step_seconds_;
  prometheus::Gauge& requests_running_;
  prometheus::Gauge& requests_queued_;
  prometheus::Gauge& state_slots_used_;
  prometheus::Gauge& state_slots_capacity_;
  // The old name of state_slots_capacity, a gauge with a counter's suffix: kept for one release
  // (0.x) so dashboards can move; docs/DEPLOY.md lists it as deprecated.
  prometheus::Gauge& state_slots_total_;
  prometheus::Gauge& state_bytes_per_request_;
  prometheus::Family<prometheus::Gauge>& state_part_bytes_per_request_;
  prometheus::Counter& prefix_cache_hits_total_;
  prometheus::Counter& prefix_cache_misses_total_;
  prometheus::Counter& prefix_cache_tokens_saved_total_;
  prometheus::Counter& prefix_cache_evictions_total_;
  prometheus::Gauge& prefix_cache_bytes_;
  prometheus::Gauge& prefix_cache_entries_;
  engine::PrefixCacheStats prefix_seen_;  // engine thread: what the counters already count
  prometheus::Gauge& sessions_;
  prometheus::Gauge& session_bytes_;
  prometheus::Counter& session_evictions_total_;
  prometheus::Counter& session_expirations_total_;
  engine::SessionStoreStats sessions_seen_;  // engine thread: what the counters already count
  GatewayMetrics gateway_;                   // vllm:* beside ours, on the same registry
};

}  // namespace slotserve::server
