#include "models/language_model.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kernels/sampling.h"
#include "models/finite_weights.h"
#include "models/model_weights.h"
#include "models/safetensors_file.h"
#include "models/step_sampling_inputs.h"
#include "models/transformer_model.h"

namespace slotserve::models {

absl::StatusOr<std::unique_ptr<LanguageModel>> LanguageModel::Load(const std::filesystem::path& dir,
                                                                   kernels::Backend backend) {
  if (backend == kernels::Backend::kCuda && !kernels::CudaCompiledIn()) {
    return absl::FailedPreconditionError(
        "backend cuda: this build has no CUDA backend (built without SLOTSERVE_WITH_CUDA)");
  }
  if (backend == kernels::Backend::kCuda && !kernels::CudaDeviceAvailable()) {
    return absl::FailedPreconditionError("backend cuda: no usable CUDA device");
  }
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) {
    return absl::NotFoundError(
        absl::StrCat(dir.string(), ": not a model directory (no such directory)"));
  }
  SLOTSERVE_ASSIGN_OR_RETURN(const ModelConfig config, LoadModelConfig(dir / "config.json"));
  SLOTSERVE_ASSIGN_OR_RETURN(const std::unique_ptr<SafetensorsFile> file,
                             SafetensorsFile::Open(dir / "model.safetensors"));
  SLOTSERVE_RETURN_IF_ERROR(CheckWeights(config, *file));
  SLOTSERVE_RETURN_IF_ERROR(CheckWeightsAreFinite(*file));
  SLOTSERVE_ASSIGN_OR_RETURN(std::unique_ptr<TransformerModel> model,
                             TransformerModel::Create(config, backend, *file));
  return std::unique_ptr<LanguageModel>(std::move(model));
}

absl::Status LanguageModel::StepAndSample(StateArena& states, std::span<const int32_t> slots,
                                          std::span<const int32_t> tokens,
                                          std::span<const TokenSampling> sampling,
                                          std::span<int32_t> out_tokens) {
  SLOTSERVE_RETURN_IF_ERROR(
      CheckTokenSampling(sampling, slots.size(), out_tokens.size(), "StepAndSample"));
  const int vocab = config().vocab_size;
  std::vector<float> logits(slots.size() * static_cast<size_t>(vocab));
  SLOTSERVE_RETURN_IF_ERROR(Step(states, slots, tokens, logits));
  // Host memory is the reference backend's device memory.
  StepSamplingInputs inputs(kernels::Backend::kReference);
  SLOTSERVE_RETURN_IF_ERROR(inputs.Stage(sampling, /*stream=*/nullptr));
  kernels::LaunchSampling(kernels::Backend::kReference, inputs.Params(logits.data(), vocab, vocab));
  std::copy_n(inputs.out_tokens(), out_tokens.size(), out_tokens.begin());
  return absl::OkStatus();
}

}  // namespace slotserve::models
