// Device buffers for the activations of one forward pass, sized for the largest call so far
// and grown (never shrunk) when a bigger one comes, so steady-state decoding allocates nothing.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "kernels/backend.h"
#include "kernels/device_memory.h"

namespace slotserve::models {

struct ScratchWidths {
  int model = 0;        // E
  int projections = 0;  // width of the fused attention input projection
  int ffn = 0;          // F
  int vocab = 0;        // V
};

class ForwardScratch {
 public:
  ForwardScratch(kernels::Backend backend, ScratchWidths widths);

  // Makes room for `rows` tokens, of which `logit_rows` need logits.
  absl::Status Reserve(int rows, int logit_rows);
  // Changes whenever Reserve reallocates a buffer (so its address changes): a captured decode
  // graph that points into the old buffers must then be dropped.
  int64_t generation() const { return generation_; }

  const ScratchWidths& widths() const { return widths_; }
  float* hidden() const { return hidden_.as<float>(); }            // [rows, E] the residual stream
  float* normed() const { return normed_.as<float>(); }            // [rows, E] norm outputs
  float* projections() const { return projections_.as<float>(); }  // [rows, projections]
  float* attention() const { return attention_.as<float>(); }      // [rows, E]
  float* ffn() const { return ffn_.as<float>(); }                  // [rows, F]
  float* logits() const { return logits_.as<float>(); }            // [logit_rows, V]
  int32_t* tokens() const { return tokens_.as<int32_t>(); }        // [rows]
  // Positions fed to the sinusoidal embedding (request position + position_offset).
  int32_t* embed_positions() const { return embed_positions_.as<int32_t>(); }
  // Step only: each row's slot and request position.
  int32_t* slots() const { return slots_.as<int32_t>(); }
  int32_t* positions() const { return positions_.as<int32_t>(); }

 private:
  kernels::Backend backend_;
  ScratchWidths widths_;
  int rows_ = 0;
  int logit_rows_ = 0;
  int64_t generation_ = 0;
  kernels::DeviceBuffer hidden_, normed_, projections_, attention_, ffn_, logits_;
  kernels::DeviceBuffer tokens_, embed_positions_, slots_, positions_;
};

}  // namespace slotserve::models
