#include "models/cross_attention_kind.h"

#include <cstdio>
#include <cstdlib>

namespace slotserve::models {

const std::vector<CrossAttentionKindDescription>& CrossAttentionKinds() {
  static const auto* const kinds = new std::vector<CrossAttentionKindDescription>{
      SoftmaxCrossAttention(), AbcCrossAttention(), RfaCrossAttention(), LunaCrossAttention(),
      SrformerCrossAttention()};
  return *kinds;
}

const CrossAttentionKindDescription& DescribeCrossAttentionKind(CrossAttentionKind kind) {
  for (const CrossAttentionKindDescription& description : CrossAttentionKinds()) {
    if (description.kind == kind) return description;
  }
  // Only a new CrossAttentionKind without its entry gets here: a build that cannot work at all.
  std::fprintf(
      stderr, "slotserve: cross attention kind %d has no entry in models/cross_attention_kind.cc\n",
      static_cast<int>(kind));
  std::abort();
}

const char* CrossAttentionKindName(CrossAttentionKind kind) {
  return DescribeCrossAttentionKind(kind).name;
}

kernels::SoftmaxPoolingParams CrossPoolingInto(float* memory, int memory_rows, const float* kv,
                                               int positions, int heads, int head_dim) {
  const int64_t width = static_cast<int64_t>(heads) * head_dim;
  kernels::SoftmaxPoolingParams pooling;
  pooling.positions = positions;
  pooling.heads = heads;
  pooling.head_dim = head_dim;
  pooling.memory_rows = memory_rows;
  pooling.keys = kv;
  pooling.values = kv + width;
  pooling.in_stride = 2 * width;
  pooling.out_keys = memory;
  pooling.out_values = memory + memory_rows * width;
  return pooling;
}

kernels::MemoryAttentionParams CrossMemoryAttentionRead(const CrossMemoryRead& read) {
  const ModelConfig& decoder = read.config->decoder;
  kernels::MemoryAttentionParams p;
  p.rows = read.rows;
  p.heads = decoder.n_heads;
  p.head_dim = decoder.head_dim();
  p.q = read.queries;
  p.q_stride = decoder.d_model;
  p.out = read.out;
  p.out_stride = decoder.d_model;
  return p;
}

std::vector<float> CrossTensorFloats(const SafetensorsFile& file, const std::string& name) {
  return file.Find(name)->ToFloat32();
}

}  // namespace slotserve::models
