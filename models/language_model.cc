#include "models/language_model.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "models/attention_kind.h"
#include "models/finite_weights.h"
#include "models/fla_model.h"
#include "models/model_weights.h"
#include "models/safetensors_file.h"
#include "models/seq2seq_config.h"
#include "models/seq2seq_model.h"
#include "models/seq2seq_weights.h"
#include "models/shared_config_keys.h"
#include "models/token_selector.h"
#include "models/transformer_model.h"

namespace slotserve::models {
namespace {

// An encoder-decoder directory is checked as strictly as a decoder-only one (config, tensor
// table, finite weights), so its mistakes are reported by name.
absl::StatusOr<std::unique_ptr<LanguageModel>> LoadEncoderDecoder(const std::filesystem::path& dir,
                                                                  kernels::Backend backend) {
  SLOTSERVE_ASSIGN_OR_RETURN(const Seq2seqConfig config, LoadSeq2seqConfig(dir / "config.json"));
  SLOTSERVE_ASSIGN_OR_RETURN(const std::unique_ptr<SafetensorsFile> file,
                             SafetensorsFile::Open(dir / "model.safetensors"));
  SLOTSERVE_RETURN_IF_ERROR(CheckSeq2seqWeights(config, *file));
  SLOTSERVE_RETURN_IF_ERROR(CheckWeightsAreFinite(*file));
  SLOTSERVE_ASSIGN_OR_RETURN(std::unique_ptr<Seq2seqModel> model,
                             Seq2seqModel::Create(config, backend, *file));
  return std::unique_ptr<LanguageModel>(std::move(model));
}

// --kv-cache-dtype f16 is for decoder-only softmax models (kv_cache_dtype.h).
absl::Status NoKvCache(const std::filesystem::path& dir, const char* what) {
  return absl::InvalidArgumentError(absl::StrCat(
      dir.string(), ": kv cache dtype f16 is for decoder-only softmax models; this is ", what,
      ", whose state stays f32 (use --kv-cache-dtype f32)"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<StateArena>> LanguageModel::AllocateStatesSharingCrossMemories(
    int num_slots, int /*cross_memories*/) const {
  return AllocateStates(num_slots);
}

absl::StatusOr<std::unique_ptr<LanguageModel>> LanguageModel::Load(
    const std::filesystem::path& dir, kernels::Backend backend, const ModelLoadOptions& options) {
  if (backend == kernels::Backend::kCuda && !kernels::CudaCompiledIn()) {
    return absl::FailedPreconditionError(
        "backend cuda: this build has no CUDA backend (built without SLOTSERVE_WITH_CUDA)");
  }
  if (backend == kernels::Backend::kCuda && !kernels::CudaDeviceAvailable()) {
    const kernels::CudaProbe probe = kernels::ProbeCudaDevice();
    return absl::FailedPreconditionError(absl::StrCat(
        "backend cuda: ", kernels::CudaDeviceStateName(probe.state), " (", probe.detail, ")"));
  }
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) {
    return absl::NotFoundError(
        absl::StrCat(dir.string(), ": not a model directory (no such directory)"));
  }
  SLOTSERVE_ASSIGN_OR_RETURN(const std::string config_text, ReadConfigFile(dir / "config.json"));
  const bool f16_cache = options.kv_cache_dtype == KvCacheDtype::kF16;
  if (LooksLikeFlaConfig(config_text)) {
    if (f16_cache) return NoKvCache(dir, "a flash-linear-attention checkpoint");
    SLOTSERVE_ASSIGN_OR_RETURN(std::unique_ptr<FlaModel> model, FlaModel::Load(dir, backend));
    return std::unique_ptr<LanguageModel>(std::move(model));
  }
  SLOTSERVE_ASSIGN_OR_RETURN(const std::string format, ReadConfigFormat(dir / "config.json"));
  if (format == "slotserve-seq2seq") {
    if (f16_cache) return NoKvCache(dir, "an encoder-decoder model");
    return LoadEncoderDecoder(dir, backend);
  }
  SLOTSERVE_ASSIGN_OR_RETURN(ModelConfig config, LoadModelConfig(dir / "config.json"));
  if (absl::Status status = ApplyKvCacheDtype(options.kv_cache_dtype, config); !status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(dir.string(), ": ", status.message()));
  }
  SLOTSERVE_ASSIGN_OR_RETURN(const std::unique_ptr<SafetensorsFile> file,
                             SafetensorsFile::Open(dir / "model.safetensors"));
  SLOTSERVE_RETURN_IF_ERROR(CheckWeights(config, *file));
  SLOTSERVE_RETURN_IF_ERROR(CheckWeightsAreFinite(*file));
  SLOTSERVE_ASSIGN_OR_RETURN(std::unique_ptr<TransformerModel> model,
                             TransformerModel::Create(config, backend, *file));
  return std::unique_ptr<LanguageModel>(std::move(model));
}

std::string ServedAttentionKind(const LanguageModel& model) {
  if (const FlaConfig* fla = model.fla(); fla != nullptr) return FlaModelTypeName(*fla);
  return AttentionKindName(model.config().attention.kind);
}

std::string DescribeServedAttention(const LanguageModel& model) {
  if (const FlaConfig* fla = model.fla(); fla != nullptr) return DescribeFlaAttention(*fla);
  return DescribeAttention(model.config().attention);
}

absl::Status CheckTokensInVocabulary(std::span<const int32_t> tokens, int vocab_size,
                                     const char* call) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= vocab_size) {
      return absl::InternalError(absl::StrCat(
          call, ": token ", tokens[i], " at index ", i, " is outside [0, ", vocab_size,
          "); ids reach a model call checked against the vocabulary, so the caller has a bug"));
    }
  }
  return absl::OkStatus();
}

absl::Status LanguageModel::Encode(StateArena& /*states*/, int /*slot*/,
                                   std::span<const int32_t> /*source*/) {
  return absl::FailedPreconditionError(
      "Encode: this is a decoder-only model (a source is for encoder-decoder models)");
}

absl::Status LanguageModel::StepAndSample(StateArena& states, std::span<const int32_t> slots,
                                          std::span<const int32_t> tokens,
                                          const SamplingColumns& sampling,
                                          std::span<int32_t> out_tokens,
                                          std::span<float> raw_logits) {
  const int vocab = config().vocab_size;
  SLOTSERVE_RETURN_IF_ERROR(CheckSamplingColumns(sampling, slots.size(), out_tokens.size(),
                                                 raw_logits.size(), vocab, "StepAndSample"));
  std::vector<float> logits(slots.size() * static_cast<size_t>(vocab));
  SLOTSERVE_RETURN_IF_ERROR(Step(states, slots, tokens, logits));
  return SelectOnHost(logits, sampling, out_tokens, raw_logits);
}

absl::StatusOr<int32_t> LanguageModel::PrefillAndSample(StateArena& states, int slot,
                                                        std::span<const int32_t> tokens,
                                                        const SamplingColumns& sampling,
                                                        std::span<float> raw_logits) {
  const int vocab = config().vocab_size;
  int32_t token = -1;
  SLOTSERVE_RETURN_IF_ERROR(
      CheckSamplingColumns(sampling, 1, 1, raw_logits.size(), vocab, "PrefillAndSample"));
  std::vector<float> logits(static_cast<size_t>(vocab));
  SLOTSERVE_RETURN_IF_ERROR(Prefill(states, slot, tokens, LogitsWanted::kLastToken, logits));
  SLOTSERVE_RETURN_IF_ERROR(SelectOnHost(logits, sampling, {&token, 1}, raw_logits));
  return token;
}

absl::Status LanguageModel::SelectOnHost(std::span<float> logits, const SamplingColumns& sampling,
                                         std::span<int32_t> out_tokens,
                                         std::span<float> raw_logits) const {
  // Host memory is the host backends' device memory; the reference model keeps its own op.
  const kernels::Backend host = backend() == kernels::Backend::kReference
                                    ? kernels::Backend::kReference
                                    : kernels::Backend::kCpu;
  const int vocab = config().vocab_size;
  TokenSelector selector(host);
  SLOTSERVE_RETURN_IF_ERROR(selector.Stage(sampling, /*stream=*/nullptr));
  selector.Select(logits.data(), vocab, vocab, out_tokens, raw_logits, /*stream=*/nullptr);
  return absl::OkStatus();
}

}  // namespace slotserve::models
