// The int8 weight-only format's quantiser (docs/MODEL_FORMAT.md, "int8 weights"): which tensors
// of a model are stored int8 and how a matrix becomes int8 rows with per-row scales. The same
// rule as the Python reference's writer (python/slotserve_ref/int8_weights.py), so both produce
// the same bytes from the same float weights.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "models/safetensors_file.h"

namespace slotserve::models {

// True for the tensors the format stores int8: every matrix (2 dimensions) named "*.weight" —
// the linear layers, the token embedding and the LM head. Vectors and the attention constants
// (rfa_random, luna_p, linformer_proj, ...) stay floating point.
bool QuantisedInInt8(std::string_view name, const std::vector<int64_t>& shape);

struct Int8Rows {
  std::vector<int8_t> values;  // [rows, cols]
  std::vector<float> scales;   // [rows]
};

// Per row r: scale = float32(max |w| / 127) (0 for an all-zero row), then q =
// round-half-to-even(w / scale) with that stored F32 scale, clamped to [-127, 127], in double
// precision. `weights` is [rows, cols], row-major.
Int8Rows QuantiseRows(const std::vector<float>& weights, int64_t rows, int64_t cols);

}  // namespace slotserve::models
