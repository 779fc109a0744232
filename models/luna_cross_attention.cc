// Luna cross attention as an entry of the cross-kind table: learnt packing queries
// P = pq_proj(luna_p) pool the source's K and V (after ConvLuna's optional filter along the
// source axis) into L rows once per request, which every decoder row reads
// (kernels/memory_attention.h).
#include <cmath>

#include "absl/strings/str_cat.h"
#include "base/json_fields.h"
#include "base/status_macros.h"
#include "kernels/source_filter.h"
#include "models/cross_attention_kind.h"
#include "models/device_weights.h"

namespace slotserve::models {
namespace {

absl::Status ParseLunaSourceFilter(const nlohmann::json& object, const std::string& source,
                                   SourceFilterConfig& filter) {
  base::JsonFields fields(object, source, "cross_attention.filter.");
  SLOTSERVE_RETURN_IF_ERROR(fields.RefuseUnknownKeys({"op", "kernel", "stride"}));
  SLOTSERVE_ASSIGN_OR_RETURN(const int op, fields.Choice("op", {"conv", "maxpool"}));
  filter.maxpool = op == 1;
  SLOTSERVE_ASSIGN_OR_RETURN(filter.kernel, fields.Integer("kernel", 1, kMaxCrossMemory));
  SLOTSERVE_ASSIGN_OR_RETURN(filter.stride, fields.Integer("stride", 1, kMaxCrossMemory));
  return absl::OkStatus();
}

absl::Status ParseLunaCrossOptions(base::JsonFields& fields, const std::string& source,
                                   CrossAttentionConfig& cross) {
  SLOTSERVE_ASSIGN_OR_RETURN(cross.length, fields.Integer("length", 1, kMaxCrossMemory));
  SLOTSERVE_ASSIGN_OR_RETURN(const double temperature, fields.Number("temperature"));
  if (static_cast<float>(temperature) <= 0) {
    return fields.Error("temperature", absl::StrCat("must be > 0, got ", temperature));
  }
  cross.temperature = static_cast<float>(temperature);
  SLOTSERVE_ASSIGN_OR_RETURN(const nlohmann::json* filter, fields.ObjectOrNull("filter"));
  cross.has_filter = filter != nullptr;
  if (filter != nullptr)
    SLOTSERVE_RETURN_IF_ERROR(ParseLunaSourceFilter(*filter, source, cross.filter));
  return absl::OkStatus();
}

bool LunaHasConvFilter(const CrossAttentionConfig& cross) {
  return cross.has_filter && !cross.filter.maxpool;
}

void AddLunaCrossTensors(const Seq2seqConfig& config, std::vector<ExpectedTensor>& tensors) {
  const int64_t width = config.decoder.d_model;
  tensors.push_back({"luna_p", {config.cross.length, width}});
  AddLinearTensors(tensors, "pq_proj", width, width);
  if (LunaHasConvFilter(config.cross)) {
    tensors.push_back({"filter.weight", {config.cross.filter.kernel}});
    tensors.push_back({"filter.bias", {1}});
  }
}

// P = luna_p pq_projᵀ + b ([L, E]), in double: a per-layer constant computed once at load.
std::vector<float> PackingQueries(const SafetensorsFile& file, const std::string& cross, int length,
                                  int width) {
  const std::vector<float> p = CrossTensorFloats(file, cross + "luna_p");
  const std::vector<float> w = CrossTensorFloats(file, cross + "pq_proj.weight");
  const std::vector<float> b = CrossTensorFloats(file, cross + "pq_proj.bias");
  std::vector<float> out(static_cast<size_t>(length) * width);
  for (int l = 0; l < length; ++l) {
    for (int o = 0; o < width; ++o) {
      double sum = b[o];
      for (int i = 0; i < width; ++i) {
        sum += static_cast<double>(w[static_cast<size_t>(o) * width + i]) *
               p[static_cast<size_t>(l) * width + i];
      }
      out[static_cast<size_t>(l) * width + o] = static_cast<float>(sum);
    }
  }
  return out;
}

absl::Status LoadLunaCrossWeights(const Seq2seqConfig& config, kernels::Backend backend,
                                  const SafetensorsFile& file, const std::string& cross_prefix,
                                  CrossAttentionWeights& weights) {
  SLOTSERVE_ASSIGN_OR_RETURN(
      weights.packing_queries,
      UploadFloats(backend, PackingQueries(file, cross_prefix, config.cross.length,
                                           config.decoder.d_model)));
  if (LunaHasConvFilter(config.cross)) {
    SLOTSERVE_ASSIGN_OR_RETURN(
        weights.filter_weight,
        UploadFloats(backend, CrossTensorFloats(file, cross_prefix + "filter.weight")));
    SLOTSERVE_ASSIGN_OR_RETURN(
        weights.filter_bias,
        UploadFloats(backend, CrossTensorFloats(file, cross_prefix + "filter.bias")));
  }
  return absl::OkStatus();
}

int64_t LunaCrossMemoryFloats(const Seq2seqConfig& config) {
  return kernels::MemoryAttentionFloatsPerLayer(config.decoder.n_heads, config.decoder.head_dim(),
                                                config.cross.length);
}

void BuildLunaCrossMemory(const CrossMemoryBuild& build) {
  const CrossAttentionConfig& cross = build.config->cross;
  const int width = build.config->decoder.d_model;
  const int head_dim = build.config->decoder.head_dim();
  const float* keys = build.kv;
  int filtered_positions = build.positions;
  if (cross.has_filter) {
    kernels::SourceFilterParams filter;
    filter.positions = build.positions;
    filter.columns = 2 * width;
    filter.kernel = cross.filter.kernel;
    filter.stride = cross.filter.stride;
    filter.maxpool = cross.filter.maxpool;
    filter.weight = build.weights->filter_weight.as<float>();
    filter.bias = build.weights->filter_bias.as<float>();
    filter.in = build.kv;
    filter.in_stride = 2 * width;
    filter.out = build.filtered_kv;
    filter.out_stride = 2 * width;
    kernels::LaunchSourceFilter(build.backend, filter, build.stream);
    keys = build.filtered_kv;
    filtered_positions = kernels::FilteredRows(build.positions, filter.stride);
  }
  kernels::SoftmaxPoolingParams pooling =
      CrossPoolingInto(build.memory, cross.length, keys, filtered_positions,
                       build.config->decoder.n_heads, head_dim);
  pooling.queries = build.weights->packing_queries.as<float>();
  pooling.logit_scale =
      static_cast<float>(1.0 / (std::sqrt(static_cast<double>(head_dim)) * cross.temperature));
  kernels::LaunchSoftmaxPooling(build.backend, pooling, build.stream);
}

void ReadLunaCrossMemory(const CrossMemoryRead& read) {
  kernels::MemoryAttentionParams p = CrossMemoryAttentionRead(read);
  p.capacity = read.config->cross.length;
  kernels::LaunchMemoryAttention(read.backend, p, read.target, read.stream);
}

}  // namespace

CrossAttentionKindDescription LunaCrossAttention() {
  return {.kind = CrossAttentionKind::kLuna,
          .name = "luna",
          .option_keys = {"length", "temperature", "filter"},
          .parse_options = ParseLunaCrossOptions,
          .add_tensors = AddLunaCrossTensors,
          .load_weights = LoadLunaCrossWeights,
          .memory_floats_per_layer = LunaCrossMemoryFloats,
          .hypothesis_floats_per_layer = nullptr,
          .build_memory = BuildLunaCrossMemory,
          .read_memory = ReadLunaCrossMemory};
}

}  // namespace slotserve::models
