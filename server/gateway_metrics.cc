#include "server/gateway_metrics.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace slotserve::server {
namespace {

prometheus::Gauge& AddModelGauge(prometheus::Registry& registry, const std::string& name,
                                 const std::string& help, const std::string& model_name) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(registry).Add(
      {{"model_name", model_name}});
}

double Occupancy(const engine::SchedulerStats& stats) {
  return stats.slots_total > 0 ? static_cast<double>(stats.slots_used) / stats.slots_total : 0;
}

}  // namespace

GatewayMetrics::GatewayMetrics(prometheus::Registry& registry, const std::string& model_name,
                               int slots_total)
    : model_name_(model_name),
      num_requests_waiting_(AddModelGauge(registry, "vllm:num_requests_waiting",
                                          "Requests waiting for a state slot (vLLM's name for "
                                          "slotserve_requests_queued)",
                                          model_name)),
      num_requests_running_(AddModelGauge(registry, "vllm:num_requests_running",
                                          "Requests holding a state slot (vLLM's name for "
                                          "slotserve_requests_running)",
                                          model_name)),
      kv_cache_usage_perc_(AddModelGauge(registry, "vllm:kv_cache_usage_perc",
                                         "Fraction of the state-slot pool in use, 0 to 1 (a "
                                         "recurrent state slot is this server's KV cache)",
                                         model_name)),
      gpu_cache_usage_perc_(AddModelGauge(registry, "vllm:gpu_cache_usage_perc",
                                          "The same as vllm:kv_cache_usage_perc, under the name "
                                          "older endpoint pickers read",
                                          model_name)),
      cache_config_info_(prometheus::BuildGauge()
                             .Name("vllm:cache_config_info")
                             .Help("Always 1; block_size: tokens per prefix state "
                                   "(--prefix-block), num_gpu_blocks: prefix states "
                                   "--prefix-cache-memory holds")
                             .Register(registry)),
      lora_requests_info_(prometheus::BuildGauge()
                              .Name("vllm:lora_requests_info")
                              .Help("Time of the last update; no LoRA adapters are served here")
                              .Register(registry)
                              .Add({{"max_lora", "0"},
                                    {"running_lora_adapters", ""},
                                    {"waiting_lora_adapters", ""}})) {
  SetPrefixCacheConfig(0, 0);
  OnStats({.slots_total = slots_total});
}

void GatewayMetrics::SetPrefixCacheConfig(int block_tokens, int64_t states) {
  if (cache_config_series_ != nullptr) cache_config_info_.Remove(cache_config_series_);
  cache_config_series_ = &cache_config_info_.Add({{"model_name", model_name_},
                                                  {"block_size", absl::StrCat(block_tokens)},
                                                  {"num_gpu_blocks", absl::StrCat(states)}});
  cache_config_series_->Set(1);
}

void GatewayMetrics::OnStats(const engine::SchedulerStats& stats) {
  num_requests_waiting_.Set(stats.queued);
  num_requests_running_.Set(stats.running);
  kv_cache_usage_perc_.Set(Occupancy(stats));
  gpu_cache_usage_perc_.Set(Occupancy(stats));
  lora_requests_info_.Set(absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()));
}

}  // namespace slotserve::server
