#include "server/grpc/model_info.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "engine/sampling_defaults.h"
#include "kernels/backend.h"
#include "models/abc_controls.h"
#include "models/attention_kind.h"
#include "models/fla_config.h"

namespace slotserve::server {

v1::ModelInfo DescribeModel(const engine::Scheduler& scheduler, const std::string& model_name) {
  const models::ModelConfig& config = scheduler.model_config();
  const engine::SchedulerOptions& options = scheduler.options();
  const engine::SchedulerStats stats = scheduler.stats();
  v1::ModelInfo info;
  info.set_model(model_name);
  const models::Seq2seqShape* seq2seq = scheduler.seq2seq();
  const models::FlaConfig* fla = scheduler.fla();
  info.set_architecture(seq2seq != nullptr ? "encoder-decoder transformer, pre-norm"
                        : fla != nullptr   ? absl::StrCat("flash-linear-attention ",
                                                          models::FlaModelTypeName(*fla),
                                                          " checkpoint (RMSNorm, SwiGLU), pre-norm: ",
                                                          models::DescribeFlaAttention(*fla))
                                           : "decoder-only transformer, pre-norm");
  if (seq2seq != nullptr) {
    info.set_is_seq2seq(true);
    info.set_cross_attention_kind(seq2seq->cross_kind);
    info.set_max_source_tokens(static_cast<uint32_t>(seq2seq->max_source_tokens));
    info.set_decoder_state_bytes_per_request(seq2seq->decoder_state_bytes);
    info.set_cross_memory_bytes_per_request(seq2seq->cross_memory_bytes);
    info.set_decoder_start_id(seq2seq->decoder_start_id);
    info.set_cross_memories_total(static_cast<uint32_t>(
        options.max_cross_memories > 0 ? options.max_cross_memories : options.max_slots));
  }
  const models::AttentionKindDescription& kind =
      models::DescribeAttentionKind(config.attention.kind);
  info.set_attention_kind(fla != nullptr ? models::FlaModelTypeName(*fla) : kind.name);
  info.set_attention_memory_size(models::AttentionMemorySize(config.attention));
  info.set_attention_memory_unit(kind.memory_size_key);
  if (config.attention.kind == models::AttentionKind::kAbc && fla == nullptr) {
    info.set_attention_control(models::AbcControlName(config.attention.control));
    info.set_attention_control_activation(
        models::AbcControlActivationName(config.attention.control));
  }
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
  for (const int32_t id : scheduler.eos_ids()) info.add_eos_ids(id);
  info.set_max_context_tokens(scheduler.max_context());
  const engine::SamplingOptions sampling = engine::DefaultSampling(options.sampling_defaults);
  v1::SamplingParams& default_sampling = *info.mutable_default_sampling();
  default_sampling.set_temperature(sampling.temperature);
  default_sampling.set_top_k(sampling.top_k);
  default_sampling.set_top_p(sampling.top_p);
  default_sampling.set_min_p(sampling.min_p);
  default_sampling.set_repetition_penalty(sampling.repetition_penalty);
  info.set_max_prompt_tokens(options.max_prompt_tokens);
  info.set_max_new_tokens_limit(options.max_new_tokens_limit);
  info.set_default_max_new_tokens(options.default_max_new_tokens);
  info.set_requests_running(stats.running);
  info.set_requests_queued(stats.queued);
  info.set_max_n(static_cast<uint32_t>(std::min(options.max_n, stats.slots_total)));
  info.set_max_beam_width(
      static_cast<uint32_t>(std::min(options.max_beam_width, stats.slots_total)));
  info.set_prefix_block(static_cast<uint32_t>(options.prefix_block));
  info.set_prefix_cache_bytes_limit(options.prefix_cache_bytes);
  info.set_session_memory_bytes_limit(options.session_memory_bytes);
  info.set_session_ttl_seconds(absl::ToDoubleSeconds(options.session_ttl));
  return info;
}

std::string DescribeSeq2seqState(const models::Seq2seqShape* seq2seq) {
  if (seq2seq == nullptr) return "";
  return absl::StrCat(
      " (encoder-decoder: ", seq2seq->decoder_state_bytes, " per hypothesis + ",
      seq2seq->cross_memory_bytes, " cross memory shared by a request's beams, cross attention ",
      seq2seq->cross_kind, ", sources up to ", seq2seq->max_source_tokens, " tokens)");
}

}  // namespace slotserve::server
