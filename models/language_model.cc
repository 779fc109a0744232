#include "models/language_model.h"

#include "absl/strings/str_cat.h"
#include "models/model_weights.h"
#include "models/safetensors_file.h"
#include "models/status_macros.h"
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
  SLOTSERVE_ASSIGN_OR_RETURN(std::unique_ptr<TransformerModel> model,
                             TransformerModel::Create(config, backend, *file));
  return std::unique_ptr<LanguageModel>(std::move(model));
}

}  // namespace slotserve::models
