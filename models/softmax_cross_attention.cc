// Softmax cross attention as an entry of the cross-kind table: the encoder's K and V of every
// source position are the memory (kernels/memory_attention.h, max_source_tokens rows, n in use).
#include "kernels/memory_attention.h"
#include "models/cross_attention_kind.h"

namespace slotserve::models {
namespace {

int64_t SoftmaxCrossMemoryFloats(const Seq2seqConfig& config) {
  return kernels::MemoryAttentionFloatsPerLayer(config.decoder.n_heads, config.decoder.head_dim(),
                                                config.max_source_tokens);
}

void BuildSoftmaxCrossMemory(const CrossMemoryBuild& build) {
  // memory_attention's layout: K [N, E] then V [N, E], the first `positions` rows in use: the K
  // and V halves of the [positions, 2E] projection, one strided copy each.
  const int width = build.config->decoder.d_model;
  const int64_t capacity = build.config->max_source_tokens;
  const size_t row_bytes = static_cast<size_t>(width) * sizeof(float);
  kernels::CopyDeviceToDevice2D(build.backend, build.memory, row_bytes, build.kv, 2 * row_bytes,
                                row_bytes, build.positions, build.stream);
  kernels::CopyDeviceToDevice2D(build.backend, build.memory + capacity * width, row_bytes,
                                build.kv + width, 2 * row_bytes, row_bytes, build.positions,
                                build.stream);
}

void ReadSoftmaxCrossMemory(const CrossMemoryRead& read) {
  kernels::MemoryAttentionParams p = CrossMemoryAttentionRead(read);
  p.capacity = read.config->max_source_tokens;
  p.length_offset = read.length_offset;
  kernels::LaunchMemoryAttention(read.backend, p, read.target, read.stream);
}

}  // namespace

CrossAttentionKindDescription SoftmaxCrossAttention() {
  return {.kind = CrossAttentionKind::kSoftmax,
          .name = "softmax",
          .option_keys = {},
          .parse_options = nullptr,
          .add_tensors = nullptr,
          .load_weights = nullptr,
          .memory_floats_per_layer = SoftmaxCrossMemoryFloats,
          .hypothesis_floats_per_layer = nullptr,
          .build_memory = BuildSoftmaxCrossMemory,
          .read_memory = ReadSoftmaxCrossMemory};
}

}  // namespace slotserve::models
