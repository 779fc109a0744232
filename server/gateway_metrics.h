// vLLM's metric names, beside ours, for the Kubernetes Gateway API Inference Extension
// (docs/DEPLOY.md). Its endpoint picker (EPP) chooses a replica for each request from what it
// scrapes off /metrics under the names its model-server protocol lists
// (docs/proposals/003-model-server-protocol in gateway-api-inference-extension), which are
// vLLM's; llm-d and KServe's LLMInferenceService use the same picker. Each is labelled
// model_name, as vLLM's are:
//   vllm:num_requests_waiting   gauge  requests waiting for a state slot
//   (slotserve_requests_queued) vllm:num_requests_running   gauge  requests holding a state slot
//   (slotserve_requests_running) vllm:kv_cache_usage_perc    gauge  the slot pool's occupancy as a
//   fraction in [0, 1]: a
//                                      recurrent state slot is what vLLM's KV cache blocks are to
//                                      a softmax model, the memory a running request holds
//   vllm:gpu_cache_usage_perc   gauge  the same, under the name pickers before vLLM 0.10 read
//   vllm:cache_config_info      gauge  1, labelled block_size (--prefix-block: the tokens per
//                                      prefix state) and num_gpu_blocks (how many prefix states
//                                      --prefix-cache-memory holds), which the picker's prefix
//                                      scorer reads for its own estimate of what is cached
//   vllm:lora_requests_info     gauge  the time of its last update, labelled max_lora "0" and no
//                                      running or waiting adapters: there are no LoRA adapters
//                                      here, and saying so keeps the picker's LoRA affinity off
#pragma once

#include <cstdint>
#include <string>

#include "engine/engine_observer.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"

namespace slotserve::server {

class GatewayMetrics {
 public:
  GatewayMetrics(prometheus::Registry& registry, const std::string& model_name, int slots_total);

  // cache_config_info's labels; until called, both "0" (no prefix cache).
  void SetPrefixCacheConfig(int block_tokens, int64_t states);
  // Engine thread, with every SchedulerStats ServerMetrics gets.
  void OnStats(const engine::SchedulerStats& stats);

 private:
  const std::string model_name_;
  prometheus::Gauge& num_requests_waiting_;
  prometheus::Gauge& num_requests_running_;
  prometheus::Gauge& kv_cache_usage_perc_;
  prometheus::Gauge& gpu_cache_usage_perc_;
  prometheus::Family<prometheus::Gauge>& cache_config_info_;
  prometheus::Gauge* cache_config_series_ = nullptr;
  prometheus::Gauge& lora_requests_info_;
};

}  // namespace slotserve::server
