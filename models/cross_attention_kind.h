// The table of cross-attention kinds of an encoder–decoder model (docs/ARCHITECTURE.md
// "Encoder–decoder models"): one entry per kind, holding everything the config parser, the weights
// check and load, the slot layout, Encode and the decoder's cross sub-block would otherwise switch
// on — its config.json keys, its tensors, the floats of its cross memory (shared by a request's
// slots) and of its per-hypothesis part, how Encode builds the memory from the encoder output and
// how a decoder row reads it. Each kind's entry lives in its own models/<kind>_cross_attention.cc.
//
// Adding a cross kind: its kernels (kernels/<kind>.h, reference/cpu/cuda), one value of
// CrossAttentionKind, one <kind>_cross_attention.cc defining its entry (and its weights'
// fields in CrossAttentionWeights), one line in CrossAttentionKinds(), and its tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kernels/backend.h"
#include "kernels/memory_attention.h"
#include "kernels/recurrent_state.h"
#include "kernels/softmax_pooling.h"
#include "models/cross_attention_weights.h"
#include "models/model_weights.h"
#include "models/safetensors_file.h"
#include "models/seq2seq_config.h"

namespace slotserve::base {
class JsonFields;
}  // namespace slotserve::base

namespace slotserve::models {

// Bounds that keep the cross memory's size far from integer overflow, as for self-attention.
inline constexpr int64_t kMaxCrossMemory = 1 << 16;  // abc slots, rfa features, luna length,
                                                     // srformer segment, filter sizes
inline constexpr int64_t kMaxSourceTokens = 1 << 24;

// Encode's build of one decoder layer's cross memory from the encoder output X.
struct CrossMemoryBuild {
  kernels::Backend backend = kernels::Backend::kCpu;
  kernels::Stream stream = nullptr;
  const Seq2seqConfig* config = nullptr;
  const CrossAttentionWeights* weights = nullptr;
  int positions = 0;              // source tokens
  const float* source = nullptr;  // X [positions, E]
  const float* kv = nullptr;      // X's keys and values side by side [positions, 2E]
  float* memory = nullptr;        // the layer's cross memory in the request's block
  // The same memory as a prefill target (for a kind whose build is a recurrent prefill).
  kernels::PrefillTarget memory_target;
  // Scratch of Seq2seqModel, [max_source_tokens rows]: abc's slot logits [N, H*M]; K, V after
  // ConvLuna's filter [N, 2E]; a kernel's output nobody reads [N, E].
  float* slot_logits = nullptr;
  float* filtered_kv = nullptr;
  float* discarded = nullptr;
};

// The decoder's read of the cross memory for `rows` rows of one layer.
struct CrossMemoryRead {
  kernels::Backend backend = kernels::Backend::kCpu;
  kernels::Stream stream = nullptr;
  const Seq2seqConfig* config = nullptr;
  const CrossAttentionWeights* weights = nullptr;
  int rows = 0;
  bool prefill = false;            // the rows are one request's consecutive tokens
  const float* queries = nullptr;  // [rows, E]
  float* out = nullptr;            // [rows, E]
  // The rows' cross memory blocks at this layer (its "slots" are the blocks), and the source
  // length's offset in a block.
  kernels::StepTarget target;
  int64_t length_offset = 0;
  // The rows' own slots at this layer's per-hypothesis part (slot_floats_per_layer), and the
  // device array of those slots [rows].
  kernels::StateView hypothesis_state;
  const int32_t* hypothesis_slots = nullptr;
};

struct CrossAttentionKindDescription {
  CrossAttentionKind kind;
  // config.json's cross_attention.kind; also ModelInfo's cross_attention_kind and the
  // start-up line's.
  const char* name;

  // The keys cross_attention takes besides "kind", read by parse_options (null: none).
  std::vector<std::string> option_keys;
  absl::Status (*parse_options)(base::JsonFields& fields, const std::string& source,
                                CrossAttentionConfig& cross);

  // The kind's own tensors of one decoder layer, named relative to "cross." (after q, k, v
  // and o_proj, which every kind has), and their load into `weights` from names under
  // `cross_prefix` ("decoder.layers.3.cross."); null: none.
  void (*add_tensors)(const Seq2seqConfig& config, std::vector<ExpectedTensor>& tensors);
  absl::Status (*load_weights)(const Seq2seqConfig& config, kernels::Backend backend,
                               const SafetensorsFile& file, const std::string& cross_prefix,
                               CrossAttentionWeights& weights);

  // Floats of one layer's cross memory for one request (the kernel header's layout), and of
  // the part each hypothesis keeps in its own slot (srformer's RAF state; null: none).
  int64_t (*memory_floats_per_layer)(const Seq2seqConfig& config);
  int64_t (*hypothesis_floats_per_layer)(const Seq2seqConfig& config);

  void (*build_memory)(const CrossMemoryBuild& build);
  void (*read_memory)(const CrossMemoryRead& read);
};

// Every kind, in the order of CrossAttentionKind.
const std::vector<CrossAttentionKindDescription>& CrossAttentionKinds();
const CrossAttentionKindDescription& DescribeCrossAttentionKind(CrossAttentionKind kind);

// The entries, each defined in its kind's file.
CrossAttentionKindDescription SoftmaxCrossAttention();
CrossAttentionKindDescription AbcCrossAttention();
CrossAttentionKindDescription RfaCrossAttention();
CrossAttentionKindDescription LunaCrossAttention();
CrossAttentionKindDescription SrformerCrossAttention();

// What the kinds share. The softmax_pooling launch of abc (logits given) and luna (packing
// queries): K and V side by side in `kv` ([positions, 2E]), the memory rows written to the
// layer's K̄/V̄ blocks.
kernels::SoftmaxPoolingParams CrossPoolingInto(float* memory, int memory_rows, const float* kv,
                                               int positions, int heads, int head_dim);
// The memory_attention read of abc, luna and softmax: the rows' queries against the memory's
// K and V; the kind sets capacity (and the source length's offset).
kernels::MemoryAttentionParams CrossMemoryAttentionRead(const CrossMemoryRead& read);
// A tensor of `file` as fp32 (already checked by CheckSeq2seqWeights).
std::vector<float> CrossTensorFloats(const SafetensorsFile& file, const std::string& name);

}  // namespace slotserve::models
