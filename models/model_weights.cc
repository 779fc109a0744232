#include "models/model_weights.h"

#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "models/attention_kind.h"

namespace slotserve::models {

void AddLinearTensors(std::vector<ExpectedTensor>& tensors, const std::string& name, int64_t out,
                      int64_t in) {
  tensors.push_back({name + ".weight", {out, in}});
  tensors.push_back({name + ".bias", {out}});
}

void AddNormTensors(std::vector<ExpectedTensor>& tensors, const std::string& name, int64_t dim) {
  tensors.push_back({name + ".weight", {dim}});
  tensors.push_back({name + ".bias", {dim}});
}

void AddBlockTensors(std::vector<ExpectedTensor>& tensors, const ModelConfig& config,
                     const std::string& prefix) {
  const int64_t E = config.d_model;
  AddNormTensors(tensors, prefix + "attn_norm", E);
  for (AttentionTensor& tensor : AttentionLayerTensors(config)) {
    tensors.push_back({prefix + "attn." + tensor.name, std::move(tensor.shape)});
  }
  AddNormTensors(tensors, prefix + "ffn_norm", E);
  AddLinearTensors(tensors, prefix + "ffn.up", config.d_ffn, E);
  AddLinearTensors(tensors, prefix + "ffn.down", E, config.d_ffn);
}

std::string AttentionPrefix(int layer) { return absl::StrCat("layers.", layer, ".attn."); }

std::vector<ExpectedTensor> ExpectedTensors(const ModelConfig& config) {
  const int64_t E = config.d_model;
  const int64_t V = config.vocab_size;
  std::vector<ExpectedTensor> tensors;
  tensors.push_back({"tok_embed.weight", {V, E}});
  for (int layer = 0; layer < config.n_layers; ++layer) {
    AddBlockTensors(tensors, config, absl::StrCat("layers.", layer, "."));
  }
  AddNormTensors(tensors, "final_norm", E);
  if (!config.tie_embeddings) tensors.push_back({"lm_head.weight", {V, E}});
  return tensors;
}

absl::Status CheckWeights(const ModelConfig& config, const SafetensorsFile& file) {
  return CheckTensorTable(ExpectedTensors(config), file,
                          absl::StrCat("a ", AttentionKindName(config.attention.kind), " model"));
}

absl::Status CheckTensorTable(const std::vector<ExpectedTensor>& expected,
                              const SafetensorsFile& file, const std::string& model) {
  std::set<std::string, std::less<>> expected_names;
  for (const ExpectedTensor& tensor : expected) {
    expected_names.insert(tensor.name);
    const SafetensorsTensor* found = file.Find(tensor.name);
    if (found == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(file.source(), ": missing tensor ",
                                                     tensor.name, " (expected shape ",
                                                     ShapeString(tensor.shape), ")"));
    }
    if (found->shape != tensor.shape) {
      return absl::InvalidArgumentError(absl::StrCat(file.source(), ": tensor ", tensor.name,
                                                     " has shape ", ShapeString(found->shape),
                                                     ", expected ", ShapeString(tensor.shape)));
    }
  }
  for (const auto& [name, tensor] : file.tensors()) {
    if (tensor.is_row_scale) continue;  // an int8 matrix's scales, checked with it by Open
    if (!expected_names.contains(name)) {
      return absl::InvalidArgumentError(absl::StrCat(file.source(), ": unexpected tensor ", name,
                                                     ": ", model,
                                                     " with this config.json has no such tensor"));
    }
  }
  return absl::OkStatus();
}

}  // namespace slotserve::models
