// Refuses weight files that hold NaN or infinity. A single non-finite value in a norm weight
// or a projection turns every logit of every request into NaN, which the server would then
// serve as garbage tokens; found at load, it is one clear error naming the tensor instead.
// int8 matrices are checked for the one value the format forbids, -128.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "models/safetensors_file.h"

namespace slotserve::models {

// OK when every element of every tensor in `file` is finite (F32, F16 and BF16 are read by
// their exponent bits, so the check costs one pass over the mapping and no conversion).
// Otherwise INVALID_ARGUMENT naming the file, the tensor, the element and what it holds.
absl::Status CheckWeightsAreFinite(const SafetensorsFile& file);
// The same check for one tensor, named in messages as in `source` (a file or a shard index).
absl::Status CheckTensorIsFinite(const std::string& source, const SafetensorsTensor& tensor);

}  // namespace slotserve::models
