#include "bench/bench_model.h"

#include <algorithm>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "models/attention_kind.h"
#include "models/weight_shards.h"

namespace slotserve::bench {
namespace {

// model.safetensors = 8-byte little-endian header length, JSON header, tensor data.
absl::StatusOr<int64_t> SafetensorsDataBytes(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  uint8_t length_bytes[8] = {};
  if (!file.read(reinterpret_cast<char*>(length_bytes), sizeof(length_bytes))) {
    return absl::NotFoundError(
        absl::StrCat(path.string(), ": cannot read the 8-byte safetensors header length"));
  }
  uint64_t header_length = 0;
  for (int i = 7; i >= 0; --i) header_length = (header_length << 8) | length_bytes[i];
  std::error_code error;
  const auto file_size = std::filesystem::file_size(path, error);
  if (error || file_size < 8 + header_length) {
    return absl::InvalidArgumentError(absl::StrCat(path.string(), ": file size ", file_size,
                                                   " is smaller than its header (",
                                                   8 + header_length, " bytes)"));
  }
  return static_cast<int64_t>(file_size - 8 - header_length);
}

}  // namespace

absl::StatusOr<std::unique_ptr<BenchModel>> BenchModel::Load(const std::filesystem::path& dir,
                                                             kernels::Backend backend,
                                                             int batch_slots,
                                                             models::KvCacheDtype kv_cache_dtype) {
  if (batch_slots <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("BenchModel::Load: batch_slots must be > 0, got ", batch_slots));
  }
  std::unique_ptr<BenchModel> bench(new BenchModel());
  bench->name_ = dir.filename().string();
  if (bench->name_.empty()) bench->name_ = dir.parent_path().filename().string();
  if (kv_cache_dtype == models::KvCacheDtype::kF16) bench->name_ += "-kv-f16";
  auto model = models::LanguageModel::Load(dir, backend, {.kv_cache_dtype = kv_cache_dtype});
  SLOTSERVE_RETURN_IF_ERROR(model.status());
  bench->model_ = std::move(*model);
  auto states = bench->model_->AllocateStates(batch_slots + 1);
  if (!states.ok()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        dir.string(), ": cannot allocate ", batch_slots + 1, " state slots of ",
        bench->model_->state_bytes_per_request(), " bytes: ", states.status().message()));
  }
  bench->states_ = std::move(*states);
  // One model.safetensors, or the shards of an index (fla checkpoints).
  auto shards = models::WeightShards::Open(dir);
  SLOTSERVE_RETURN_IF_ERROR(shards.status());
  bench->weight_bytes_ = 0;
  for (const std::filesystem::path& file : shards->files()) {
    auto weight_bytes = SafetensorsDataBytes(file);
    SLOTSERVE_RETURN_IF_ERROR(weight_bytes.status());
    bench->weight_bytes_ += *weight_bytes;
  }
  const int vocab = bench->config().vocab_size;
  bench->step_tokens_ = SyntheticTokens(batch_slots, vocab, /*seed=*/7);
  bench->step_slots_.resize(batch_slots);
  for (int i = 0; i < batch_slots; ++i) bench->step_slots_[i] = i;
  bench->logits_.resize(static_cast<size_t>(batch_slots) * vocab);
  return bench;
}

std::string BenchModel::kind() const { return models::ServedAttentionKind(*model_); }

int BenchModel::pristine_context() const { return states_->position(pristine_slot()); }

absl::Status BenchModel::GrowPristineContext(int length) {
  const int have = pristine_context();
  if (length < have) {
    SLOTSERVE_RETURN_IF_ERROR(states_->Reset(pristine_slot()));
    return GrowPristineContext(length);
  }
  if (length == have) return absl::OkStatus();
  if (static_cast<int>(context_tokens_.size()) < length) {
    context_tokens_ = SyntheticTokens(length, config().vocab_size, /*seed=*/1);
  }
  std::span<const int32_t> missing(context_tokens_.data() + have, length - have);
  return model_->Prefill(*states_, pristine_slot(), missing, models::LogitsWanted::kLastToken,
                         std::span<float>(logits_.data(), config().vocab_size));
}

absl::Status BenchModel::CopyPristineToBatch(int batch) {
  for (int slot = 0; slot < batch; ++slot) {
    SLOTSERVE_RETURN_IF_ERROR(states_->Copy(pristine_slot(), slot));
  }
  return absl::OkStatus();
}

absl::Status BenchModel::Step(int batch) {
  if (batch <= 0 || batch > batch_slots()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Step: batch must be in [1, ", batch_slots(), "], got ", batch));
  }
  const size_t rows = static_cast<size_t>(batch);
  return model_->Step(*states_, std::span<const int32_t>(step_slots_.data(), rows),
                      std::span<const int32_t>(step_tokens_.data(), rows),
                      std::span<float>(logits_.data(), rows * config().vocab_size));
}

absl::Status BenchModel::StepAndSample(int batch, float temperature, float top_p) {
  if (batch <= 0 || batch > batch_slots()) {
    return absl::InvalidArgumentError(
        absl::StrCat("StepAndSample: batch must be in [1, ", batch_slots(), "], got ", batch));
  }
  const size_t rows = static_cast<size_t>(batch);
  sampled_tokens_.resize(rows);
  // Every row samples alike, from its own stream; the other options are off.
  sampling_.Clear();
  for (size_t row = 0; row < rows; ++row) {
    sampling_.temperature.push_back(temperature);
    sampling_.top_k.push_back(0);
    sampling_.top_p.push_back(top_p);
    sampling_.min_p.push_back(0.0f);
    sampling_.repetition_penalty.push_back(1.0f);
    sampling_.presence_penalty.push_back(0.0f);
    sampling_.frequency_penalty.push_back(0.0f);
    sampling_.seeds.push_back(row);
    sampling_.draw_index.push_back(draws_);
    sampling_.AddLists({}, {}, {});
    sampling_.want_raw_logits.push_back(0);
  }
  ++draws_;
  return model_->StepAndSample(*states_, std::span<const int32_t>(step_slots_.data(), rows),
                               std::span<const int32_t>(step_tokens_.data(), rows), sampling_,
                               std::span<int32_t>(sampled_tokens_.data(), rows),
                               std::span<float>());
}

absl::Status BenchModel::PrefillIntoEmptySlot(int length) {
  if (static_cast<int>(context_tokens_.size()) < length) {
    context_tokens_ = SyntheticTokens(length, config().vocab_size, /*seed=*/1);
  }
  return model_->Prefill(*states_, 0, std::span<const int32_t>(context_tokens_.data(), length),
                         models::LogitsWanted::kLastToken,
                         std::span<float>(logits_.data(), config().vocab_size));
}

double BenchModel::MatmulFlopsPerToken() const {
  const models::ModelConfig& c = config();
  const double e = c.d_model;
  double projection_width = 0;  // the fused input projections: q, k, v and the kind's own
  for (const models::InputProjection& projection :
       models::DescribeAttentionKind(c.attention.kind).input_projections(c)) {
    projection_width += static_cast<double>(projection.outputs);
  }
  const double per_layer = e * projection_width + e * e + 2 * e * c.d_ffn;
  const double head = static_cast<double>(c.vocab_size) * e;
  return 2 * (c.n_layers * per_layer + head);
}

double BenchModel::AttentionFlopsPerToken(int context) const {
  const models::ModelConfig& c = config();
  const double memory = models::AttentionMemoryAtContext(c.attention, std::max(context, 1));
  const double per_head = models::DescribeAttentionKind(c.attention.kind).flops_per_memory_element *
                          memory * c.head_dim();
  return static_cast<double>(c.n_layers) * c.n_heads * per_head;
}

}  // namespace slotserve::bench
