// slotserve-quantize: writes a model directory's weights in the int8 weight-only format
// (docs/MODEL_FORMAT.md, "int8 weights"): every matrix named "*.weight" (the linear layers,
// the embedding, the LM head) becomes int8 rows with one F32 scale per row; vectors and the
// attention constants are written as F32. The other files of the directory (config.json,
// tokenizer.model, ...) are copied unchanged. An fla checkpoint (docs/FLA_CHECKPOINTS.md) is
// quantised the same way, its shards written back as one model.safetensors under fla's names
// (its convolution kernels, [C, 1, W], are not matrices and stay F32).
//
//   slotserve-quantize MODEL_DIR OUT_DIR
//
// The weights are quantised from their stored values (F32, F16 or BF16). The result loads with
// every backend and keeps its matrices int8 in memory (a quarter of F32's bytes).
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "models/fla_config.h"
#include "models/int8_quantisation.h"
#include "models/language_model.h"
#include "models/model_config.h"
#include "models/safetensors_file.h"
#include "models/safetensors_writer.h"
#include "models/seq2seq_config.h"
#include "models/shared_config_keys.h"
#include "models/tools/command_line.h"
#include "models/weight_shards.h"

namespace slotserve::models {
namespace {

std::string FloatBytes(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

absl::Status Quantize(const std::filesystem::path& in, const std::filesystem::path& out) {
  // Decoder-only models, ours or fla's, and encoder-decoder models (docs/ARCHITECTURE.md
  // "Encoder–decoder models"): the same rule picks the matrices of each.
  SLOTSERVE_ASSIGN_OR_RETURN(const std::string config_text, ReadConfigFile(in / "config.json"));
  const bool fla = LooksLikeFlaConfig(config_text);
  if (fla) {
    SLOTSERVE_RETURN_IF_ERROR(LoadFlaConfig(in / "config.json").status());
  } else {
    SLOTSERVE_ASSIGN_OR_RETURN(const std::string format, ReadConfigFormat(in / "config.json"));
    if (format == "slotserve-seq2seq") {
      SLOTSERVE_RETURN_IF_ERROR(LoadSeq2seqConfig(in / "config.json").status());
    } else if (format == "slotserve-lm") {
      SLOTSERVE_RETURN_IF_ERROR(LoadModelConfig(in / "config.json").status());
    } else {
      return absl::UnimplementedError(absl::StrCat(
          (in / "config.json").string(), ": format \"", format,
          "\" cannot be quantised: slotserve-quantize writes slotserve-lm and slotserve-seq2seq "
          "models and fla checkpoints"));
    }
  }
  // One model.safetensors, or an fla checkpoint's shards (written back as one file).
  SLOTSERVE_ASSIGN_OR_RETURN(const WeightShards shards, WeightShards::Open(in));
  if (std::filesystem::exists(out) && !std::filesystem::is_empty(out)) {
    return absl::AlreadyExistsError(
        absl::StrCat(out.string(), ": exists and is not empty; give a new directory"));
  }
  std::filesystem::create_directories(out);
  std::vector<TensorToWrite> tensors;
  int quantised = 0;
  int64_t bytes_before = 0;
  for (const auto& [name, stored] : shards.tensors()) {
    const SafetensorsTensor& tensor = *stored;  // row scales come with their int8 matrix
    bytes_before += tensor.bytes;
    const std::vector<float> values = tensor.ToFloat32();
    if (!QuantisedInInt8(name, tensor.shape)) {
      tensors.push_back({name, kernels::DType::kF32, tensor.shape, FloatBytes(values)});
      continue;
    }
    const Int8Rows rows = QuantiseRows(values, tensor.shape[0], tensor.shape[1]);
    tensors.push_back(
        {name, kernels::DType::kI8, tensor.shape,
         std::string(reinterpret_cast<const char*>(rows.values.data()), rows.values.size())});
    tensors.push_back(
        {name + "_scale", kernels::DType::kF32, {tensor.shape[0]}, FloatBytes(rows.scales)});
    ++quantised;
  }
  SLOTSERVE_RETURN_IF_ERROR(WriteSafetensors(out / "model.safetensors", tensors));
  for (const auto& entry : std::filesystem::directory_iterator(in)) {
    const std::string file = entry.path().filename().string();
    const bool weights = file == WeightShards::kSingleFile || file == WeightShards::kIndexFile ||
                         (file.starts_with("model-") && file.ends_with(".safetensors"));
    if (!entry.is_regular_file() || weights) continue;
    std::filesystem::copy_file(entry.path(), out / entry.path().filename());
  }
  int64_t bytes_after = 0;
  for (const TensorToWrite& tensor : tensors)
    bytes_after += static_cast<int64_t>(tensor.bytes.size());
  std::printf("slotserve-quantize: %s -> %s: %d matrices int8, weights %lld -> %lld bytes\n",
              in.c_str(), out.c_str(), quantised, static_cast<long long>(bytes_before),
              static_cast<long long>(bytes_after));
  // The result must load: a model the server would refuse is not written silently.
  return LanguageModel::Load(out, kernels::Backend::kReference).status();
}

}  // namespace
}  // namespace slotserve::models

int main(int argc, char** argv) {
  if (argc != 3) {
    const bool help = argc == 2 && std::strcmp(argv[1], "--help") == 0;
    std::fprintf(help ? stdout : stderr, "usage: slotserve-quantize MODEL_DIR OUT_DIR\n");
    return help ? 0 : 2;
  }
  const absl::Status status = slotserve::models::Quantize(argv[1], argv[2]);
  if (!status.ok()) {
    std::fprintf(stderr, "slotserve-quantize: %s\n",
                 slotserve::models::OneLineMessage(status).c_str());
    return 1;
  }
  return 0;
}
