// A model under benchmark: a LanguageModel loaded from a model directory, its state arena, and
// the figures the report divides by (weight bytes read per step, FLOPs per token).
//
// Slot layout: slots [0, batch) are the batch being timed; the last slot is the "pristine"
// context, prefilled once and copied over the batch slots before every timed repeat, so each
// repeat decodes at exactly the requested context length (the softmax cost depends on it).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/synthetic_tokens.h"
#include "kernels/backend.h"
#include "models/language_model.h"
#include "models/sampling_columns.h"
#include "models/state_arena.h"

namespace slotserve::bench {

class BenchModel {
 public:
  // `batch_slots` is the largest batch that will be timed (one more slot is allocated for the
  // pristine context).
  // An f16 `kv_cache_dtype` adds "-kv-f16" to the name, so its rows stand apart.
  static absl::StatusOr<std::unique_ptr<BenchModel>> Load(
      const std::filesystem::path& dir, kernels::Backend backend, int batch_slots,
      models::KvCacheDtype kv_cache_dtype = models::KvCacheDtype::kF32);

  // The directory's base name (e.g. "abc", "softmax-16k"): what the tables call the model.
  const std::string& name() const { return name_; }
  // The attention kind ("abc", "rfa", "luna", "softmax").
  std::string kind() const;
  const models::ModelConfig& config() const { return model_->config(); }
  models::LanguageModel& model() { return *model_; }
  models::StateArena& states() { return *states_; }
  int batch_slots() const { return states_->num_slots() - 1; }

  // Makes the pristine slot hold a context of `length` tokens (deterministic pseudo-random
  // ids), prefilling only the tokens it lacks when it already holds a shorter prefix.
  absl::Status GrowPristineContext(int length);
  int pristine_context() const;
  // Copies the pristine context over slots [0, batch).
  absl::Status CopyPristineToBatch(int batch);
  // One decode step for slots [0, batch).
  absl::Status Step(int batch);
  // One decode step that also picks every row's next token on the device, as the server's
  // engine steps (StepAndSample): at `temperature` (0: greedy), nothing else adjusted, each
  // row its own random stream and a new draw per call, keeping the nucleus `top_p` (1: off).
  // Only the ids cross to the host.
  absl::Status StepAndSample(int batch, float temperature, float top_p = 1.0f);
  // Prefills `length` tokens into slot 0, which the caller has reset (logits of the last token
  // only).
  absl::Status PrefillIntoEmptySlot(int length);

  // Bytes of tensor data in model.safetensors: what one decode step reads at least once.
  int64_t weight_bytes() const { return weight_bytes_; }
  // Multiply-adds x 2 of the Linear layers (input projections, o_proj, FFN, lm_head).
  double MatmulFlopsPerToken() const;
  // The attention's own arithmetic per token at `context` (an estimate from docs/MODEL_FORMAT.md
  // "The attention kinds").
  double AttentionFlopsPerToken(int context) const;

 private:
  BenchModel() = default;
  int pristine_slot() const { return states_->num_slots() - 1; }

  std::string name_;
  std::unique_ptr<models::LanguageModel> model_;
  std::unique_ptr<models::StateArena> states_;
  int64_t weight_bytes_ = 0;
  std::vector<int32_t> context_tokens_;  // the pristine context's ids, grown on demand
  std::vector<int32_t> step_tokens_;
  std::vector<int32_t> step_slots_;
  std::vector<float> logits_;
  models::SamplingColumns sampling_;  // StepAndSample's rows
  std::vector<int32_t> sampled_tokens_;
  uint64_t draws_ = 0;
};

}  // namespace slotserve::bench
