// The one description of each attention kind (docs/MODEL_FORMAT.md; docs/MODEL_FORMAT.md "The
// attention kinds"): its name, what its memory size counts and how the start-up line says it, its
// config.json keys, its per-request state, the tensors of one layer, and how its AttentionLayer is
// built. Config parsing, the weights check, the model, model info, the start-up line and the
// benchmarks ask this table rather than switching on AttentionKind, so a new kind is one more entry
// here (plus its kernels and its <kind>_attention_layer.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/backend.h"
#include "models/model_config.h"

namespace slotserve::base {
class JsonFields;
}  // namespace slotserve::base

namespace slotserve::models {

class AttentionLayer;
class SafetensorsFile;

// A tensor of one layer's attention, named under "layers.{i}.attn." ("slot_proj.weight").
struct AttentionTensor {
  std::string name;
  std::vector<int64_t> shape;
};

// A Linear layer over the attention input (weight [outputs, E], bias [outputs]) whose outputs
// the kind's kernels read for every token. A layer's input projections are fused into one
// matrix, in the order the kind lists them, so that a chunk is projected by one GEMM.
struct InputProjection {
  std::string name;  // "q_proj"
  int64_t outputs = 0;
};

struct AttentionKindDescription {
  AttentionKind kind;
  // config.json's attention.kind; also GetModelInfo's attention_kind, the build_info metric's
  // label and the benchmarks' kind column.
  const char* name;

  // The memory size: M memory rows (abc), D random features (rfa), the packed length L (luna)
  // or max_context tokens of KV cache (softmax). The config.json key holding it, which
  // GetModelInfo also reports as attention_memory_unit ("slots" for abc: ABC's memory rows, not
  // the server's state slots).
  const char* memory_size_key;
  int AttentionConfig::*memory_size;
  int64_t max_memory_size;  // largest value config.json may give
  // The memory size as the start-up line says it: an absl::Substitute format of it, "$0 slots".
  const char* memory_phrase;
  // True when the state keeps one row per token (softmax's KV cache): the memory size then caps
  // a request's context, and a request at a shorter context needs only that many rows.
  bool memory_is_context;

  // The other keys config.json's attention object takes besides "kind" and memory_size_key,
  // read and checked by parse_options (null when there are none).
  std::vector<std::string> option_keys;
  absl::Status (*parse_options)(base::JsonFields& fields, AttentionConfig& attention);

  // The longest context a request may reach, or 0 for none (bounded only by positions staying
  // int32): softmax's max_context, abc's linformer and compressive controls.
  int64_t (*context_limit)(const AttentionConfig& attention);
  // What the start-up line adds after the memory (", window control"; null: nothing).
  std::string (*describe_options)(const AttentionConfig& attention);

  // Floats of one layer's state for one request (the kernel header's layout).
  int64_t (*state_floats_per_layer)(int heads, int head_dim, int memory_size);

  // The layer's input projections, in fused column order, and the tensors it loads once as
  // constants (not run per token). With o_proj these are every tensor under layers.{i}.attn.
  std::vector<InputProjection> (*input_projections)(const ModelConfig& config);
  std::vector<AttentionTensor> (*constant_tensors)(const ModelConfig& config);

  // The attention's own arithmetic per token and head, in FLOPs (2 x multiply-adds) per memory
  // element (memory size x head_dim): the benchmarks' estimate from docs/MODEL_FORMAT.md "The
  // attention kinds".
  double flops_per_memory_element;

  // Builds one layer's mixer, loading its constants (named from `attention_prefix`, e.g.
  // "layers.3.attn.") from `file` (already checked by CheckWeights) to the backend's device.
  absl::StatusOr<std::unique_ptr<AttentionLayer>> (*create_layer)(
      const ModelConfig& config, kernels::Backend backend, const SafetensorsFile& file,
      const std::string& attention_prefix);
};

// Every kind, in the order of AttentionKind (and of docs/MODEL_FORMAT.md).
const std::vector<AttentionKindDescription>& AttentionKinds();
const AttentionKindDescription& DescribeAttentionKind(AttentionKind kind);

// The memory size of `attention`, whatever its kind.
int AttentionMemorySize(const AttentionConfig& attention);
// The memory a request holds after `context` tokens: the memory size, or `context` itself for
// a kind whose memory is the context.
int AttentionMemoryAtContext(const AttentionConfig& attention, int context);
// "32 slots", "32 random features", "projected length 32", "KV cache up to 512 tokens".
std::string DescribeAttentionMemory(const AttentionConfig& attention);
// The longest context of `attention`'s kind and options, 0 when unbounded.
int64_t AttentionContextLimit(const AttentionConfig& attention);
// The start-up line's attention: "abc, 32 slots" (plus the options that change its math:
// "abc, 32 slots, window control").
std::string DescribeAttention(const AttentionConfig& attention);

// Floats of one layer's state for one request, and the bytes of all layers: what the state
// arena allocates per slot and the server reports (docs/MODEL_FORMAT.md "The attention kinds";
// state is fp32 everywhere).
int64_t AttentionStateFloatsPerLayer(const ModelConfig& config);
int64_t StateBytesPerRequest(const ModelConfig& config);
// The state bytes of a request after `context` tokens (less than StateBytesPerRequest only
// for a kind whose memory is the context).
int64_t StateBytesAtContext(const ModelConfig& config, int context);

// rfa's feature options (feature_scale, eps, norm_eps, layout), shared by the self-attention
// kind and the encoder–decoder's rfa cross attention (which has no gate).
absl::Status ParseRandomFeatureOptions(base::JsonFields& fields, AttentionConfig& attention);

// The names of the input projections, in fused column order.
std::vector<std::string> InputProjectionNames(const ModelConfig& config);
// Every tensor of one layer's attention: the input projections, the constants, o_proj.
std::vector<AttentionTensor> AttentionLayerTensors(const ModelConfig& config);

}  // namespace slotserve::models
