#include "models/attention_kind.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/substitute.h"
#include "base/json_fields.h"
#include "base/status_macros.h"
#include "kernels/abc_attention.h"
#include "kernels/luna_attention.h"
#include "kernels/rfa_attention.h"
#include "kernels/softmax_attention.h"
#include "models/abc_controls.h"
#include "models/attention_layer.h"

namespace slotserve::models {

absl::Status ParseRandomFeatureOptions(base::JsonFields& fields, AttentionConfig& attention) {
  SLOTSERVE_ASSIGN_OR_RETURN(const double feature_scale, fields.Number("feature_scale"));
  if (static_cast<float>(feature_scale) == 0) return fields.Error("feature_scale", "must not be 0");
  SLOTSERVE_ASSIGN_OR_RETURN(const double eps, fields.Number("eps"));
  if (static_cast<float>(eps) <= 0) {
    return fields.Error("eps", absl::StrCat("must be > 0, got ", eps));
  }
  SLOTSERVE_ASSIGN_OR_RETURN(const double norm_eps, fields.Number("norm_eps"));
  if (static_cast<float>(norm_eps) <= 0) {
    return fields.Error("norm_eps", absl::StrCat("must be > 0, got ", norm_eps));
  }
  SLOTSERVE_ASSIGN_OR_RETURN(const int layout, fields.Choice("layout", {"concat", "interleave"}));
  attention.feature_scale = static_cast<float>(feature_scale);
  attention.eps = static_cast<float>(eps);
  attention.norm_eps = static_cast<float>(norm_eps);
  attention.interleave = layout == 1;
  return absl::OkStatus();
}

namespace {

// Upper bounds that keep every derived size (weights, state, scratch) far from integer
// overflow; real models of this family are orders of magnitude smaller.
constexpr int64_t kMaxRecurrentMemory = 1 << 16;  // abc memory rows, rfa features, luna length
constexpr int64_t kMaxContext = 1 << 24;          // softmax max_context

// q, k and v: what every kind projects first, at columns 0, E and 2E.
std::vector<InputProjection> QueryKeyValue(const ModelConfig& config) {
  const int64_t width = config.d_model;
  return {{"q_proj", width}, {"k_proj", width}, {"v_proj", width}};
}

std::vector<AttentionTensor> NoConstants(const ModelConfig& /*config*/) { return {}; }

int64_t NoContextLimit(const AttentionConfig& /*attention*/) { return 0; }
// A KV cache holds one row per token, so its memory size is the longest context.
int64_t SoftmaxContextLimit(const AttentionConfig& attention) { return attention.max_context; }
std::string DescribeSoftmaxOptions(const AttentionConfig& attention) {
  return attention.kv_cache_f16 ? ", f16 KV cache" : "";
}

// ---------------------------------------------------------------------------------------- RFA

absl::Status ParseRfaOptions(base::JsonFields& fields, AttentionConfig& attention) {
  SLOTSERVE_ASSIGN_OR_RETURN(attention.gate, fields.Bool("gate"));
  return ParseRandomFeatureOptions(fields, attention);
}

std::vector<InputProjection> RfaInputProjections(const ModelConfig& config) {
  std::vector<InputProjection> projections = QueryKeyValue(config);
  if (config.attention.gate) projections.push_back({"gate_proj", config.n_heads});
  return projections;
}

std::vector<AttentionTensor> RfaConstants(const ModelConfig& config) {
  const int64_t heads = config.n_heads;
  const int64_t head_dim = config.head_dim();
  return {{"rfa_random", {heads, config.attention.features, head_dim}},
          {"rfa_sigma", {heads, head_dim}}};
}

// --------------------------------------------------------------------------------------- Luna

absl::Status ParseLunaOptions(base::JsonFields& fields, AttentionConfig& attention) {
  SLOTSERVE_ASSIGN_OR_RETURN(const int activation,
                             fields.Choice("activation", {"softplus", "elu1"}));
  attention.elu1 = activation == 1;
  SLOTSERVE_ASSIGN_OR_RETURN(attention.tie_kv, fields.Bool("tie_kv"));
  return absl::OkStatus();
}

std::vector<InputProjection> LunaInputProjections(const ModelConfig& config) {
  std::vector<InputProjection> projections = QueryKeyValue(config);
  if (config.attention.tie_kv) projections.pop_back();  // v = k: no v_proj
  projections.push_back({"pc_proj", config.d_model});
  return projections;
}

std::vector<AttentionTensor> LunaConstants(const ModelConfig& config) {
  const int64_t width = config.d_model;
  return {{"luna_p", {config.attention.length, width}},
          {"pq_proj.weight", {width, width}},
          {"pq_proj.bias", {width}}};
}

const std::vector<AttentionKindDescription>& Table() {
  static const auto* const kinds = new std::vector<AttentionKindDescription>{
      {.kind = AttentionKind::kAbc,
       .name = "abc",
       .memory_size_key = "slots",
       .memory_size = &AttentionConfig::memory_rows,
       .max_memory_size = kMaxRecurrentMemory,
       .memory_phrase = "$0 slots",
       .memory_is_context = false,
       .option_keys = AbcOptionKeys(),
       .parse_options = ParseAbcOptions,
       .context_limit = AbcContextLimit,
       .describe_options = DescribeAbcControl,
       .state_floats_per_layer = kernels::AbcStateFloatsPerLayer,
       .input_projections = AbcInputProjections,
       .constant_tensors = AbcConstants,
       // K~, V~ updates, scores, output: 4 M x d multiply-adds.
       .flops_per_memory_element = 8,
       .create_layer = CreateAbcAttentionLayer},
      {.kind = AttentionKind::kRfa,
       .name = "rfa",
       .memory_size_key = "features",
       .memory_size = &AttentionConfig::features,
       .max_memory_size = kMaxRecurrentMemory,
       .memory_phrase = "$0 random features",
       .memory_is_context = false,
       .option_keys = {"gate", "feature_scale", "eps", "norm_eps", "layout"},
       .parse_options = ParseRfaOptions,
       .context_limit = NoContextLimit,
       .describe_options = nullptr,
       .state_floats_per_layer = kernels::RfaStateFloatsPerLayer,
       .input_projections = RfaInputProjections,
       .constant_tensors = RfaConstants,
       // phi(q), phi(k), S update, readout: 6 D x d multiply-adds.
       .flops_per_memory_element = 12,
       .create_layer = CreateRfaAttentionLayer},
      {.kind = AttentionKind::kLuna,
       .name = "luna",
       .memory_size_key = "length",
       .memory_size = &AttentionConfig::length,
       .max_memory_size = kMaxRecurrentMemory,
       .memory_phrase = "projected length $0",
       .memory_is_context = false,
       .option_keys = {"activation", "tie_kv"},
       .parse_options = ParseLunaOptions,
       .context_limit = NoContextLimit,
       .describe_options = nullptr,
       .state_floats_per_layer = kernels::LunaStateFloatsPerLayer,
       .input_projections = LunaInputProjections,
       .constant_tensors = LunaConstants,
       // p_t, A and C updates, q.A, a.C: 5 L x d multiply-adds.
       .flops_per_memory_element = 10,
       .create_layer = CreateLunaAttentionLayer},
      {.kind = AttentionKind::kSoftmax,
       .name = "softmax",
       .memory_size_key = "max_context",
       .memory_size = &AttentionConfig::max_context,
       .max_memory_size = kMaxContext,
       .memory_phrase = "KV cache up to $0 tokens",
       .memory_is_context = true,
       .option_keys = {},
       .parse_options = nullptr,
       .context_limit = SoftmaxContextLimit,
       .describe_options = DescribeSoftmaxOptions,
       .state_floats_per_layer = kernels::SoftmaxStateFloatsPerLayer,
       .input_projections = QueryKeyValue,
       .constant_tensors = NoConstants,
       // q.K and a.V over the cache: 2 context x d multiply-adds.
       .flops_per_memory_element = 4,
       .create_layer = CreateSoftmaxAttentionLayer},
  };
  return *kinds;
}

}  // namespace

const std::vector<AttentionKindDescription>& AttentionKinds() { return Table(); }

const AttentionKindDescription& DescribeAttentionKind(AttentionKind kind) {
  for (const AttentionKindDescription& description : Table()) {
    if (description.kind == kind) return description;
  }
  // Only a new AttentionKind without its entry gets here: a build that cannot work at all.
  std::fprintf(stderr, "slotserve: attention kind %d has no entry in models/attention_kind.cc\n",
               static_cast<int>(kind));
  std::abort();
}

const char* AttentionKindName(AttentionKind kind) { return DescribeAttentionKind(kind).name; }

int AttentionMemorySize(const AttentionConfig& attention) {
  return attention.*DescribeAttentionKind(attention.kind).memory_size;
}

int AttentionMemoryAtContext(const AttentionConfig& attention, int context) {
  return DescribeAttentionKind(attention.kind).memory_is_context ? context
                                                                 : AttentionMemorySize(attention);
}

std::string DescribeAttentionMemory(const AttentionConfig& attention) {
  return absl::Substitute(DescribeAttentionKind(attention.kind).memory_phrase,
                          AttentionMemorySize(attention));
}

int64_t AttentionContextLimit(const AttentionConfig& attention) {
  return DescribeAttentionKind(attention.kind).context_limit(attention);
}

std::string DescribeAttention(const AttentionConfig& attention) {
  const AttentionKindDescription& kind = DescribeAttentionKind(attention.kind);
  return absl::StrCat(kind.name, ", ", DescribeAttentionMemory(attention),
                      kind.describe_options != nullptr ? kind.describe_options(attention) : "");
}

namespace {

int64_t StateFloatsPerLayer(const ModelConfig& config, int memory_size) {
  const int64_t floats =
      DescribeAttentionKind(config.attention.kind)
          .state_floats_per_layer(config.n_heads, config.head_dim(), memory_size);
  // An f16 KV cache (softmax only, kv_cache_dtype.h) packs two halves per float.
  return config.attention.kv_cache_f16 ? floats / 2 : floats;
}

int64_t StateBytes(const ModelConfig& config, int memory_size) {
  return StateFloatsPerLayer(config, memory_size) * config.n_layers *
         static_cast<int64_t>(sizeof(float));
}

}  // namespace

int64_t AttentionStateFloatsPerLayer(const ModelConfig& config) {
  return StateFloatsPerLayer(config, AttentionMemorySize(config.attention));
}

int64_t StateBytesPerRequest(const ModelConfig& config) {
  return StateBytes(config, AttentionMemorySize(config.attention));
}

int64_t StateBytesAtContext(const ModelConfig& config, int context) {
  return StateBytes(config, AttentionMemoryAtContext(config.attention, context));
}

std::vector<std::string> InputProjectionNames(const ModelConfig& config) {
  std::vector<std::string> names;
  for (const InputProjection& projection :
       DescribeAttentionKind(config.attention.kind).input_projections(config)) {
    names.push_back(projection.name);
  }
  return names;
}

std::vector<AttentionTensor> AttentionLayerTensors(const ModelConfig& config) {
  const AttentionKindDescription& description = DescribeAttentionKind(config.attention.kind);
  const int64_t width = config.d_model;
  std::vector<AttentionTensor> tensors;
  for (const InputProjection& projection : description.input_projections(config)) {
    tensors.push_back({projection.name + ".weight", {projection.outputs, width}});
    tensors.push_back({projection.name + ".bias", {projection.outputs}});
  }
  for (AttentionTensor& constant : description.constant_tensors(config)) {
    tensors.push_back(std::move(constant));
  }
  tensors.push_back({"o_proj.weight", {width, width}});
  tensors.push_back({"o_proj.bias", {width}});
  return tensors;
}

}  // namespace slotserve::models
