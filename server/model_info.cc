#include "server/model_info.h"

#include "kernels/backend.h"
#include "models/model_config.h"

namespace slotserve::server {
namespace {

// How big the attention's per-request memory is, in the unit its kind counts it in.
void DescribeAttentionMemory(const models::AttentionConfig& attention, v1::ModelInfo* info) {
  switch (attention.kind) {
    case models::AttentionKind::kAbc:
      info->set_attention_memory_size(attention.memory_rows);
      info->set_attention_memory_unit("slots");
      return;
    case models::AttentionKind::kRfa:
      info->set_attention_memory_size(attention.features);
      info->set_attention_memory_unit("features");
      return;
    case models::AttentionKind::kLuna:
      info->set_attention_memory_size(attention.length);
      info->set_attention_memory_unit("length");
      return;
    case models::AttentionKind::kSoftmax:
      info->set_attention_memory_size(attention.max_context);
      info->set_attention_memory_unit("max_context");
      return;
  }
}

}  // namespace

v1::ModelInfo DescribeModel(const engine::Scheduler& scheduler, const std::string& model_name) {
  const models::ModelConfig& config = scheduler.model_config();
  const engine::SchedulerOptions& options = scheduler.options();
  const engine::SchedulerStats stats = scheduler.stats();
  v1::ModelInfo info;
  info.set_model(model_name);
  info.set_architecture("decoder-only transformer, pre-norm");
  info.set_attention_kind(models::AttentionKindName(config.attention.kind));
  DescribeAttentionMemory(config.attention, &info);
  info.set_vocab_size(config.vocab_size);
  info.set_d_model(config.d_model);
  info.set_n_layers(config.n_layers);
  info.set_n_heads(config.n_heads);
  info.set_d_ffn(config.d_ffn);
  info.set_state_bytes_per_request(scheduler.state_bytes_per_request());
  info.set_slots_total(stats.slots_total);
  info.set_slots_free(stats.slots_total - stats.slots_used);
  info.set_backend(kernels::BackendName(scheduler.backend()));
  info.set_bos_id(config.bos_id);
  info.set_eos_id(config.eos_id);
  info.set_max_prompt_tokens(options.max_prompt_tokens);
  info.set_max_new_tokens_limit(options.max_new_tokens_limit);
  info.set_default_max_new_tokens(options.default_max_new_tokens);
  info.set_requests_running(stats.running);
  info.set_requests_queued(stats.queued);
  return info;
}

}  // namespace slotserve::server
