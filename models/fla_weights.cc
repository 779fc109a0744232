#include "models/fla_weights.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "models/fla_mixer.h"

namespace slotserve::models {
namespace {

std::string Layer(int i) { return absl::StrCat("model.layers.", i, "."); }

// The pre-February-2025 layout (docs/FLA_CHECKPOINTS.md §2.1): with norm_first the block norms
// lived inside the sublayers, and until fla b48ca31d GatedMLP had one gate_proj [2I, E] whose
// halves were gate and up. Returns the name the checkpoint holds for today's `name`.
std::string StoredName(const FlaConfig& config, const WeightShards& shards,
                       const std::string& name) {
  if (shards.Find(name) != nullptr) return name;
  if (config.norm_first) {
    for (const auto& [today, legacy] : {std::pair{"attn_norm.weight", "attn.norm.weight"},
                                        std::pair{"mlp_norm.weight", "mlp.norm.weight"}}) {
      const std::string suffix = today;
      if (name.size() > suffix.size() &&
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        return name.substr(0, name.size() - suffix.size()) + legacy;
      }
    }
  }
  return name;
}

// Whether layer i stores gate and up as one [2I, E] gate_proj (the legacy fused MLP).
bool HasFusedGateUp(const FlaConfig& config, const WeightShards& shards, int i) {
  const SafetensorsTensor* gate = shards.Find(Layer(i) + "mlp.gate_proj.weight");
  return shards.Find(Layer(i) + "mlp.up_proj.weight") == nullptr && gate != nullptr &&
         gate->shape == std::vector<int64_t>{2LL * config.intermediate_size, config.hidden_size};
}

const SafetensorsTensor& Tensor(const FlaConfig& config, const WeightShards& shards,
                                const std::string& name) {
  return *shards.Find(StoredName(config, shards, name));
}

absl::StatusOr<kernels::DeviceBuffer> Floats(kernels::Backend backend, const FlaConfig& config,
                                             const WeightShards& shards, const std::string& name) {
  const SafetensorsTensor* part = &Tensor(config, shards, name);
  return UploadConcatenatedFloats(backend, {&part, 1});
}

absl::StatusOr<DeviceMatrix> Matrix(kernels::Backend backend, const FlaConfig& config,
                                    const WeightShards& shards,
                                    const std::vector<std::string>& names,
                                    MatrixReaders readers = MatrixReaders::kLinear) {
  std::vector<const SafetensorsTensor*> parts;
  for (const std::string& name : names) parts.push_back(&Tensor(config, shards, name));
  return UploadStackedMatrix(backend, parts, readers);
}

}  // namespace

const float* FlaLayerWeights::MixerConstant(std::string_view name) const {
  for (const auto& [constant, buffer] : mixer_constants) {
    if (constant == name) return buffer.as<float>();
  }
  return nullptr;
}

std::map<std::string, std::vector<int64_t>> ExpectedFlaTensors(const FlaConfig& c) {
  const int64_t e = c.hidden_size, w = c.conv_size;
  std::map<std::string, std::vector<int64_t>> out;
  out["model.embeddings.weight"] = {c.vocab_size, e};
  for (int i = 0; i < c.num_layers; ++i) {
    const std::string p = Layer(i);
    out[p + "attn_norm.weight"] = {e};
    out[p + "attn.q_proj.weight"] = {c.key_dim, e};
    out[p + "attn.k_proj.weight"] = {c.kv_key_dim(), e};
    out[p + "attn.v_proj.weight"] = {c.kv_value_dim(), e};
    if (c.use_short_conv) {  // depthwise nn.Conv1d, [channels, 1, conv_size], no bias
      out[p + "attn.q_conv1d.weight"] = {c.key_dim, 1, w};
      out[p + "attn.k_conv1d.weight"] = {c.kv_key_dim(), 1, w};
      out[p + "attn.v_conv1d.weight"] = {c.kv_value_dim(), 1, w};
    }
    for (const FlaMixerProjection& projection : c.mixer->projections(c)) {
      out[p + "attn." + projection.name + ".weight"] = {projection.outputs, e};
    }
    for (FlaMixerTensor& constant : c.mixer->constants(c)) {
      out[p + "attn." + constant.name] = std::move(constant.shape);
    }
    out[p + "attn.o_proj.weight"] = {e, c.value_dim};
    out[p + "mlp_norm.weight"] = {e};
    out[p + "mlp.gate_proj.weight"] = {c.intermediate_size, e};
    out[p + "mlp.up_proj.weight"] = {c.intermediate_size, e};
    out[p + "mlp.down_proj.weight"] = {e, c.intermediate_size};
  }
  out["model.norm.weight"] = {e};
  out["lm_head.weight"] = {c.vocab_size, e};
  return out;
}

absl::Status CheckFlaTensors(const FlaConfig& config, const WeightShards& shards) {
  const std::map<std::string, std::vector<int64_t>> expected = ExpectedFlaTensors(config);
  std::set<std::string> accounted;  // stored names that match an expected tensor
  std::vector<std::string> missing;
  for (const auto& [name, shape] : expected) {
    const std::string stored = StoredName(config, shards, name);
    const bool is_up = name.ends_with("mlp.up_proj.weight");
    const bool is_gate = name.ends_with("mlp.gate_proj.weight");
    if ((is_up || is_gate) && name.starts_with("model.layers.")) {
      const int layer = std::stoi(name.substr(std::string("model.layers.").size()));
      if (HasFusedGateUp(config, shards, layer)) {  // both halves live in gate_proj
        accounted.insert(Layer(layer) + "mlp.gate_proj.weight");
        continue;
      }
    }
    const SafetensorsTensor* tensor = shards.Find(stored);
    if (tensor == nullptr) {
      if (name == "lm_head.weight" && config.tie_word_embeddings) continue;
      missing.push_back(name);
      continue;
    }
    accounted.insert(stored);
    if (tensor->shape != shape) {
      return absl::InvalidArgumentError(absl::StrCat(shards.source(), ": tensor ", stored,
                                                     " has shape ", ShapeString(tensor->shape),
                                                     ", expected ", ShapeString(shape)));
    }
  }
  if (!missing.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(shards.source(), ": missing tensor(s) ", absl::StrJoin(missing, ", ")));
  }
  std::vector<std::string> extra;
  for (const auto& [name, tensor] : shards.tensors()) {
    if (!accounted.contains(name)) extra.push_back(name);
  }
  if (!extra.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(shards.source(), ": unexpected tensor(s) ", absl::StrJoin(extra, ", "),
                     " (not part of an fla ", config.mixer->model_type,
                     " model with this config; unsupported options add tensors)"));
  }
  for (const auto& [name, tensor] : shards.tensors()) {
    // I8 matrices with their row scales are what slotserve-quantize writes (the loader has
    // linked and checked the scales); anything else integer is not a weight we can read.
    const bool int8_matrix = tensor->dtype == kernels::DType::kI8 && tensor->shape.size() == 2;
    if (tensor->dtype != kernels::DType::kF32 && tensor->dtype != kernels::DType::kF16 &&
        tensor->dtype != kernels::DType::kBF16 && !int8_matrix) {
      return absl::InvalidArgumentError(absl::StrCat(
          shards.source(), ": tensor ", name, " is ", kernels::DTypeName(tensor->dtype),
          "; fla checkpoints are read with F32, F16 or BF16 weights (or int8 matrices written "
          "by slotserve-quantize) only"));
    }
  }
  return absl::OkStatus();
}

FlaProjectionColumns FlaInputColumns(const FlaConfig& c) {
  FlaProjectionColumns columns;
  int next = 0;
  const auto take = [&next](int width) {
    const int at = next;
    next += width;
    return at;
  };
  columns.q = take(c.key_dim);
  columns.k = take(c.kv_key_dim());
  columns.v = take(c.kv_value_dim());
  for (const FlaMixerProjection& projection : c.mixer->projections(c)) {
    columns.mixer.push_back(take(static_cast<int>(projection.outputs)));
  }
  columns.width = next;
  return columns;
}

absl::StatusOr<FlaWeights> LoadFlaWeights(const FlaConfig& config, kernels::Backend backend,
                                          const WeightShards& shards) {
  FlaWeights weights;
  const bool tied = shards.Find("lm_head.weight") == nullptr;  // head() is the table then
  SLOTSERVE_ASSIGN_OR_RETURN(
      weights.embeddings,
      Matrix(backend, config, shards, {"model.embeddings.weight"}, TokenTableReaders(tied)));
  if (!tied) {
    SLOTSERVE_ASSIGN_OR_RETURN(weights.lm_head,
                               Matrix(backend, config, shards, {"lm_head.weight"}));
  }
  SLOTSERVE_ASSIGN_OR_RETURN(weights.final_norm,
                             Floats(backend, config, shards, "model.norm.weight"));
  for (int i = 0; i < config.num_layers; ++i) {
    const std::string p = Layer(i);
    FlaLayerWeights layer;
    SLOTSERVE_ASSIGN_OR_RETURN(layer.attn_norm,
                               Floats(backend, config, shards, p + "attn_norm.weight"));
    std::vector<std::string> inputs = {p + "attn.q_proj.weight", p + "attn.k_proj.weight",
                                       p + "attn.v_proj.weight"};
    for (const FlaMixerProjection& projection : config.mixer->projections(config)) {
      inputs.push_back(p + "attn." + projection.name + ".weight");
    }
    SLOTSERVE_ASSIGN_OR_RETURN(layer.input_projection, Matrix(backend, config, shards, inputs));
    if (config.use_short_conv) {
      SLOTSERVE_ASSIGN_OR_RETURN(layer.q_conv,
                                 Floats(backend, config, shards, p + "attn.q_conv1d.weight"));
      SLOTSERVE_ASSIGN_OR_RETURN(layer.k_conv,
                                 Floats(backend, config, shards, p + "attn.k_conv1d.weight"));
      SLOTSERVE_ASSIGN_OR_RETURN(layer.v_conv,
                                 Floats(backend, config, shards, p + "attn.v_conv1d.weight"));
    }
    for (const FlaMixerTensor& constant : config.mixer->constants(config)) {
      SLOTSERVE_ASSIGN_OR_RETURN(kernels::DeviceBuffer buffer,
                                 Floats(backend, config, shards, p + "attn." + constant.name));
      layer.mixer_constants.emplace_back(constant.name, std::move(buffer));
    }
    SLOTSERVE_ASSIGN_OR_RETURN(layer.o_proj,
                               Matrix(backend, config, shards, {p + "attn.o_proj.weight"}));
    SLOTSERVE_ASSIGN_OR_RETURN(layer.mlp_norm,
                               Floats(backend, config, shards, p + "mlp_norm.weight"));
    if (HasFusedGateUp(config, shards, i)) {
      SLOTSERVE_ASSIGN_OR_RETURN(layer.gate_up,
                                 Matrix(backend, config, shards, {p + "mlp.gate_proj.weight"}));
    } else {
      SLOTSERVE_ASSIGN_OR_RETURN(
          layer.gate_up,
          Matrix(backend, config, shards, {p + "mlp.gate_proj.weight", p + "mlp.up_proj.weight"}));
    }
    SLOTSERVE_ASSIGN_OR_RETURN(layer.down,
                               Matrix(backend, config, shards, {p + "mlp.down_proj.weight"}));
    weights.layers.push_back(std::move(layer));
  }
  return weights;
}

}  // namespace slotserve::models
