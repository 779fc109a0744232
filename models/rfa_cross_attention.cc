// RFA cross attention as an entry of the cross-kind table: the source's φ(K)⊗V and φ(K) sums,
// built by rfa_attention's ungated prefill, read by kernels/rfa_cross_read.h. Its feature
// options are the self-attention kind's (without the gate).
#include "base/json_fields.h"
#include "base/status_macros.h"
#include "kernels/rfa_attention.h"
#include "kernels/rfa_cross_read.h"
#include "models/attention_kind.h"
#include "models/cross_attention_kind.h"
#include "models/device_weights.h"

namespace slotserve::models {
namespace {

absl::Status ParseRfaCrossOptions(base::JsonFields& fields, const std::string& /*source*/,
                                  CrossAttentionConfig& cross) {
  SLOTSERVE_ASSIGN_OR_RETURN(cross.features, fields.Integer("features", 1, kMaxCrossMemory));
  AttentionConfig features;
  SLOTSERVE_RETURN_IF_ERROR(ParseRandomFeatureOptions(fields, features));
  cross.feature_scale = features.feature_scale;
  cross.eps = features.eps;
  cross.norm_eps = features.norm_eps;
  cross.interleave = features.interleave;
  return absl::OkStatus();
}

void AddRfaCrossTensors(const Seq2seqConfig& config, std::vector<ExpectedTensor>& tensors) {
  const int64_t heads = config.decoder.n_heads;
  const int64_t head_dim = config.decoder.head_dim();
  tensors.push_back({"rfa_random", {heads, config.cross.features, head_dim}});
  tensors.push_back({"rfa_sigma", {heads, head_dim}});
}

// W~[h, f, i] = rfa_random[h, f, i] * rfa_sigma[h, i], as the self-attention kind folds it.
std::vector<float> RfaProjection(const SafetensorsFile& file, const std::string& cross, int heads,
                                 int features, int head_dim) {
  std::vector<float> random = CrossTensorFloats(file, cross + "rfa_random");
  const std::vector<float> sigma = CrossTensorFloats(file, cross + "rfa_sigma");
  for (int h = 0; h < heads; ++h) {
    for (int f = 0; f < features; ++f) {
      for (int i = 0; i < head_dim; ++i) {
        random[(static_cast<size_t>(h) * features + f) * head_dim + i] *=
            sigma[static_cast<size_t>(h) * head_dim + i];
      }
    }
  }
  return random;
}

absl::Status LoadRfaCrossWeights(const Seq2seqConfig& config, kernels::Backend backend,
                                 const SafetensorsFile& file, const std::string& cross_prefix,
                                 CrossAttentionWeights& weights) {
  SLOTSERVE_ASSIGN_OR_RETURN(
      weights.rfa_projection,
      UploadFloats(backend, RfaProjection(file, cross_prefix, config.decoder.n_heads,
                                          config.cross.features, config.decoder.head_dim())));
  return absl::OkStatus();
}

int64_t RfaCrossMemoryFloats(const Seq2seqConfig& config) {
  return kernels::RfaStateFloatsPerLayer(config.decoder.n_heads, config.decoder.head_dim(),
                                         config.cross.features);
}

// The options and projection every rfa launch over the cross memory shares.
kernels::RfaParams RfaCrossParams(const Seq2seqConfig& config, const CrossAttentionWeights& weights,
                                  int rows) {
  const CrossAttentionConfig& cross = config.cross;
  kernels::RfaParams rfa;
  rfa.rows = rows;
  rfa.heads = config.decoder.n_heads;
  rfa.head_dim = config.decoder.head_dim();
  rfa.features = cross.features;
  rfa.projection = weights.rfa_projection.as<float>();
  rfa.feature_scale = cross.feature_scale;
  rfa.eps = cross.eps;
  rfa.norm_eps = cross.norm_eps;
  rfa.interleave = cross.interleave;
  return rfa;
}

void BuildRfaCrossMemory(const CrossMemoryBuild& build) {
  // rfa_attention's ungated prefill from the empty (zeroed: a fresh block) layer sums φ(K_i)⊗V_i
  // and φ(K_i) over the source; its per-token output is not needed.
  const int width = build.config->decoder.d_model;
  kernels::RfaParams rfa = RfaCrossParams(*build.config, *build.weights, build.positions);
  rfa.q = build.kv;
  rfa.k = build.kv;
  rfa.v = build.kv + width;
  rfa.in_stride = 2 * width;
  rfa.out = build.discarded;
  rfa.out_stride = width;
  kernels::LaunchRfaPrefill(build.backend, rfa, build.memory_target, build.stream);
}

void ReadRfaCrossMemory(const CrossMemoryRead& read) {
  const int width = read.config->decoder.d_model;
  kernels::RfaParams rfa = RfaCrossParams(*read.config, *read.weights, read.rows);
  rfa.q = read.queries;
  rfa.in_stride = width;
  rfa.out = read.out;
  rfa.out_stride = width;
  kernels::LaunchRfaCrossRead(read.backend, rfa, read.target, read.stream);
}

}  // namespace

CrossAttentionKindDescription RfaCrossAttention() {
  return {.kind = CrossAttentionKind::kRfa,
          .name = "rfa",
          .option_keys = {"features", "feature_scale", "eps", "norm_eps", "layout"},
          .parse_options = ParseRfaCrossOptions,
          .add_tensors = AddRfaCrossTensors,
          .load_weights = LoadRfaCrossWeights,
          .memory_floats_per_layer = RfaCrossMemoryFloats,
          .hypothesis_floats_per_layer = nullptr,
          .build_memory = BuildRfaCrossMemory,
          .read_memory = ReadRfaCrossMemory};
}

}  // namespace slotserve::models
