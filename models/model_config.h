// config.json of a model directory (docs/MODEL_FORMAT.md), parsed and validated.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "absl/status/statusor.h"

namespace slotserve::models {

// Each kind's name, memory size, keys, state and tensors: models/attention_kind.h.
enum class AttentionKind { kAbc, kRfa, kLuna, kSoftmax };

// abc's memory control, config.json's attention.control and (for learned) attention.activation
// (docs/ABC_CONTROLS.md). kLearnedExp is today's default.
enum class MemoryControl {
  kLearnedExp,
  kLearnedRelu,
  kLearnedSigmoid,
  kWindow,
  kLinformer,
  kCompressive,
  kRandom
};

struct AttentionConfig {
  AttentionKind kind = AttentionKind::kAbc;
  // abc: M, the rows of its memory (config.json key "slots"; not the server's state slots)
  int memory_rows = 0;
  MemoryControl control = MemoryControl::kLearnedExp;
  int max_positions = 0;  // linformer: N, the columns of linformer_proj
  int stride = 0;         // compressive: c
  uint64_t seed = 0;      // random
  // rfa
  int features = 0;  // D
  bool gate = false;
  float feature_scale = 0.1f;
  float eps = 1.0f;
  float norm_eps = 1e-3f;
  bool interleave = false;  // layout: "interleave" (true) or "concat" (false)
  // luna
  int length = 0;     // L
  bool elu1 = false;  // activation: "elu1" (true) or "softplus" (false)
  bool tie_kv = false;
  // softmax
  int max_context = 0;
  // Not a config.json key: the server's --kv-cache-dtype f16 (models/kv_cache_dtype.h) keeps
  // the KV cache in halves; only softmax attention has one.
  bool kv_cache_f16 = false;
};

struct ModelConfig {
  int vocab_size = 0;
  int d_model = 0;
  int n_layers = 0;
  int n_heads = 0;
  int d_ffn = 0;
  bool gelu = true;  // activation: "gelu" (true) or "relu" (false)
  float norm_eps = 1e-5f;
  bool sinusoidal_positions = true;  // position: "sinusoidal" or "none"
  int position_offset = 0;
  bool tie_embeddings = true;
  float embed_scale = 1.0f;
  int bos_id = -1;
  int eos_id = -1;
  AttentionConfig attention;

  int head_dim() const { return d_model / n_heads; }
};

// "abc", "rfa", "luna", "softmax": the kind's name in its description (attention_kind.h).
const char* AttentionKindName(AttentionKind kind);

// Parses and validates config.json text. Errors name the key, what was expected and what was
// found, prefixed with `source` (e.g. "config.json: attention.slots must be > 0, got 0").
absl::StatusOr<ModelConfig> ParseModelConfig(const std::string& json_text,
                                             const std::string& source = "config.json");
absl::StatusOr<ModelConfig> LoadModelConfig(const std::filesystem::path& path);

}  // namespace slotserve::models
