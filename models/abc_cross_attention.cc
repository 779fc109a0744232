// ABC cross attention as an entry of the cross-kind table: slot_proj's logits over the source
// pool its K and V into M rows once per request (kernels/softmax_pooling.h), which every decoder
// row reads (kernels/memory_attention.h).
#include "base/json_fields.h"
#include "base/status_macros.h"
#include "models/block_ops.h"
#include "models/cross_attention_kind.h"
#include "models/device_weights.h"
#include "models/transformer_weights.h"

namespace slotserve::models {
namespace {

absl::Status ParseAbcCrossOptions(base::JsonFields& fields, const std::string& /*source*/,
                                  CrossAttentionConfig& cross) {
  SLOTSERVE_ASSIGN_OR_RETURN(cross.memory_rows, fields.Integer("slots", 1, kMaxCrossMemory));
  return absl::OkStatus();
}

void AddAbcCrossTensors(const Seq2seqConfig& config, std::vector<ExpectedTensor>& tensors) {
  AddLinearTensors(tensors, "slot_proj",
                   static_cast<int64_t>(config.decoder.n_heads) * config.cross.memory_rows,
                   config.decoder.d_model);
}

absl::Status LoadAbcCrossWeights(const Seq2seqConfig& /*config*/, kernels::Backend backend,
                                 const SafetensorsFile& file, const std::string& cross_prefix,
                                 CrossAttentionWeights& weights) {
  SLOTSERVE_ASSIGN_OR_RETURN(weights.slot_proj,
                             LoadLinear(backend, file, cross_prefix + "slot_proj"));
  return absl::OkStatus();
}

int64_t AbcCrossMemoryFloats(const Seq2seqConfig& config) {
  return kernels::MemoryAttentionFloatsPerLayer(config.decoder.n_heads, config.decoder.head_dim(),
                                                config.cross.memory_rows);
}

void BuildAbcCrossMemory(const CrossMemoryBuild& build) {
  const ModelConfig& decoder = build.config->decoder;
  const int width = decoder.d_model;
  const int heads = decoder.n_heads;
  const int rows = build.config->cross.memory_rows;
  RunLinear(build.backend, build.stream, build.weights->slot_proj, build.source, width,
            build.positions, build.slot_logits, static_cast<int64_t>(heads) * rows,
            /*accumulate=*/false);
  kernels::SoftmaxPoolingParams pooling =
      CrossPoolingInto(build.memory, rows, build.kv, build.positions, heads, decoder.head_dim());
  pooling.logits = build.slot_logits;
  pooling.logits_stride = static_cast<int64_t>(heads) * rows;
  kernels::LaunchSoftmaxPooling(build.backend, pooling, build.stream);
}

void ReadAbcCrossMemory(const CrossMemoryRead& read) {
  kernels::MemoryAttentionParams p = CrossMemoryAttentionRead(read);
  p.capacity = read.config->cross.memory_rows;
  kernels::LaunchMemoryAttention(read.backend, p, read.target, read.stream);
}

}  // namespace

CrossAttentionKindDescription AbcCrossAttention() {
  return {.kind = CrossAttentionKind::kAbc,
          .name = "abc",
          .option_keys = {"slots"},
          .parse_options = ParseAbcCrossOptions,
          .add_tensors = AddAbcCrossTensors,
          .load_weights = LoadAbcCrossWeights,
          .memory_floats_per_layer = AbcCrossMemoryFloats,
          .hypothesis_floats_per_layer = nullptr,
          .build_memory = BuildAbcCrossMemory,
          .read_memory = ReadAbcCrossMemory};
}

}  // namespace slotserve::models
