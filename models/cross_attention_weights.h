// One decoder layer's cross attention (docs/ARCHITECTURE.md "Encoder–decoder models") as loaded for
// the forward pass: its norm, the query / output projections, the key and value projections stacked
// (one GEMM over the encoder output gives both), and the constants of its kind, folded at load
// where the kernels want them (rfa's W~ = rfa_random * rfa_sigma, luna's packing queries P =
// pq_proj(luna_p)).
#pragma once

#include "absl/status/statusor.h"
#include "kernels/backend.h"
#include "kernels/device_memory.h"
#include "models/safetensors_file.h"
#include "models/seq2seq_config.h"
#include "models/transformer_weights.h"

namespace slotserve::models {

struct CrossAttentionWeights {
  NormWeights cross_norm;
  LinearWeights q_proj;
  LinearWeights kv_proj;  // [2E, E]: k_proj's rows, then v_proj's
  LinearWeights o_proj;
  LinearWeights slot_proj;                // abc: [H*M, E]
  kernels::DeviceBuffer rfa_projection;   // rfa: [H, D, d]
  kernels::DeviceBuffer packing_queries;  // luna: [L, E]
  kernels::DeviceBuffer filter_weight;    // luna conv filter: [kernel]
  kernels::DeviceBuffer filter_bias;      // [1]
  kernels::DeviceBuffer raf_weight;       // srformer: [d, d]
  kernels::DeviceBuffer raf_bias;         // [d]
  float raf_leak = 0.0f;
  float raf_threshold = 1.0f;
};

// Decoder layer `layer`'s cross attention; `file` must already have passed
// CheckSeq2seqWeights.
absl::StatusOr<CrossAttentionWeights> LoadCrossAttentionWeights(const Seq2seqConfig& config,
                                                                kernels::Backend backend,
                                                                const SafetensorsFile& file,
                                                                int layer);

}  // namespace slotserve::models
