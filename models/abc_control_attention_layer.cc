// ABC with one of the paper's other memory controls (docs/ABC_CONTROLS.md): the fused
// projection is [q | k | v] plus, for the learned relu/sigmoid controls, the memory logits
// (slot_proj, H*M). linformer's projection W [H, M, N] is a constant on the device; the random
// control needs the layer's index, which its draw depends on.
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kernels/abc_control_attention.h"
#include "models/abc_controls.h"
#include "models/attention_layer.h"
#include "models/device_weights.h"

namespace slotserve::models {
namespace {

kernels::AbcControl KernelControl(MemoryControl control) {
  switch (control) {
    case MemoryControl::kLearnedRelu:
      return kernels::AbcControl::kRelu;
    case MemoryControl::kLearnedSigmoid:
      return kernels::AbcControl::kSigmoid;
    case MemoryControl::kLinformer:
      return kernels::AbcControl::kLinformer;
    case MemoryControl::kCompressive:
      return kernels::AbcControl::kCompressive;
    case MemoryControl::kRandom:
      return kernels::AbcControl::kRandom;
    default:
      return kernels::AbcControl::kWindow;
  }
}

// The N of "...layers.N.attn.": the layer's index, which the random control's rows depend on.
absl::StatusOr<int> LayerIndex(const std::string& attention_prefix) {
  const size_t at = attention_prefix.rfind("layers.");
  int index = -1;
  if (at != std::string::npos) {
    const size_t begin = at + 7;
    const size_t end = attention_prefix.find('.', begin);
    if (end != std::string::npos &&
        !absl::SimpleAtoi(attention_prefix.substr(begin, end - begin), &index)) {
      index = -1;
    }
  }
  if (index < 0) {
    return absl::InternalError(
        absl::StrCat("abc control: cannot read a layer index from \"", attention_prefix, "\""));
  }
  return index;
}

class AbcControlAttentionLayer final
    : public KernelAttentionLayer<kernels::AbcControlParams, kernels::LaunchAbcControlPrefill,
                                  kernels::LaunchAbcControlStep> {
 public:
  AbcControlAttentionLayer(const ModelConfig& config, kernels::Backend backend, int layer,
                           kernels::DeviceBuffer linformer)
      : KernelAttentionLayer(config, backend), layer_(layer), linformer_(std::move(linformer)) {}

 private:
  void FillKindParams(const AttentionIo& io, kernels::AbcControlParams& params) const override {
    const AttentionConfig& attention = config().attention;
    params.memory_rows = attention.memory_rows;
    params.control = KernelControl(attention.control);
    if (AbcControlIsLearned(attention.control)) {
      params.memory_logits = io.projections + 3 * config().d_model;
    }
    params.linformer = linformer_.as<float>();
    params.max_positions = attention.max_positions;
    params.stride = attention.stride > 0 ? attention.stride : 1;
    params.seed = attention.seed;
    params.layer = layer_;
  }

  int layer_;
  kernels::DeviceBuffer linformer_;  // [H, M, N] for linformer, empty otherwise
};

}  // namespace

absl::StatusOr<std::unique_ptr<AttentionLayer>> CreateAbcControlAttentionLayer(
    const ModelConfig& config, kernels::Backend backend, const SafetensorsFile& file,
    const std::string& attention_prefix) {
  SLOTSERVE_ASSIGN_OR_RETURN(const int layer, LayerIndex(attention_prefix));
  kernels::DeviceBuffer linformer;
  if (config.attention.control == MemoryControl::kLinformer) {
    const std::vector<float> weights = file.Find(attention_prefix + "linformer_proj")->ToFloat32();
    SLOTSERVE_ASSIGN_OR_RETURN(linformer, UploadFloats(backend, weights));
  }
  return std::make_unique<AbcControlAttentionLayer>(config, backend, layer, std::move(linformer));
}

}  // namespace slotserve::models
