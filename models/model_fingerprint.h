// A model's identity for state exchange (docs/ARCHITECTURE.md "Request state"): SHA-256 over
// config.json, the safetensors header (names, dtypes, shapes, offsets) and a sample of every
// tensor's data (its first and last 4 KiB). Two directories with the same fingerprint load the same
// architecture with the same tensor layout and, in practice, the same weights, so a state saved by
// one means the same thing to the other. Hashing all the data would be exact but costs seconds per
// start-up for a multi-gigabyte model; any retraining changes the sampled bytes of every tensor.
#pragma once

#include <filesystem>

#include "absl/status/statusor.h"
#include "base/digest.h"

namespace slotserve::models {

absl::StatusOr<base::Digest> ModelFingerprint(const std::filesystem::path& model_dir);

}  // namespace slotserve::models
