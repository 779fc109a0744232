// config.json of an encoder–decoder model directory (docs/ARCHITECTURE.md "Encoder–decoder models",
// "format": "slotserve-seq2seq"), parsed and validated with the decoder-only format's shared code.
#pragma once

#include <filesystem>
#include <string>

#include "absl/status/statusor.h"
#include "models/model_config.h"

namespace slotserve::models {

enum class CrossAttentionKind { kSoftmax, kAbc, kRfa, kLuna, kSrformer };

// ConvLuna's filter along the source axis: windows of `kernel` positions starting every
// `stride` positions.
struct SourceFilterConfig {
  bool maxpool = false;  // op: "maxpool" (true) or "conv" (false)
  int kernel = 1;
  int stride = 1;
};

struct CrossAttentionConfig {
  CrossAttentionKind kind = CrossAttentionKind::kSoftmax;
  // abc: M, the rows of the compressed memory (config.json key "slots")
  int memory_rows = 0;
  // rfa (as the self-attention kind, without the gate)
  int features = 0;  // D
  float feature_scale = 0.1f;
  float eps = 1.0f;
  float norm_eps = 1e-3f;
  bool interleave = false;
  // luna
  int length = 0;  // L
  float temperature = 1.0f;
  bool has_filter = false;  // "filter": null when false
  SourceFilterConfig filter;
  // srformer
  int segment = 0;        // s, source positions per segment
  int target_length = 0;  // q, the decoder length the segments are spread over
};

struct Seq2seqConfig {
  // The shared keys with the decoder's n_layers and self-attention: the config the engine's
  // decode path sees (LanguageModel::config()).
  ModelConfig decoder;
  int encoder_layers = 0;
  int max_source_tokens = 0;
  int decoder_start_id = 0;
  CrossAttentionConfig cross;

  // The encoder as a decoder-only config: softmax attention over max_source_tokens (only its
  // mask differs: the encoder's is bidirectional).
  ModelConfig EncoderView() const;
};

// "softmax", "abc", "rfa", "luna", "srformer".
const char* CrossAttentionKindName(CrossAttentionKind kind);

// Parses and validates config.json text; errors name the key (e.g.
// "config.json: cross_attention.slots must be > 0, got 0").
absl::StatusOr<Seq2seqConfig> ParseSeq2seqConfig(const std::string& json_text,
                                                 const std::string& source = "config.json");
absl::StatusOr<Seq2seqConfig> LoadSeq2seqConfig(const std::filesystem::path& path);

}  // namespace slotserve::models
