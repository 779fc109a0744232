// The golden data of tests/golden/models/<variant>/ (see README.md): the token sequence and
// the PyTorch reference's logits after each token.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace slotserve::golden {

struct GoldenData {
  std::vector<int32_t> tokens;
  int vocab_size = 0;
  std::vector<float> logits;  // [tokens.size(), vocab_size]

  // Logits after feeding tokens[0..t].
  std::span<const float> Row(size_t t) const {
    return std::span<const float>(logits).subspan(t * vocab_size, vocab_size);
  }
};

// The folder holding one directory per variant (set by CMake).
std::filesystem::path GoldenModelsDir();

// The folder of fla checkpoints in fla's own layout (fla/, issue 20), read by the same tests.
std::filesystem::path GoldenFlaDir();

// Variant names (directory names holding a golden.json) under `root`, sorted.
std::vector<std::string> GoldenVariants(const std::filesystem::path& root = GoldenModelsDir());

// `logits_file`: golden_logits.f32, or golden_logits_int8_activations.f32 of the int8 variants
// (the engine's --int8-activations).
absl::StatusOr<GoldenData> LoadGoldenData(const std::filesystem::path& variant_dir,
                                          const std::string& logits_file = "golden_logits.f32");

// max_i |a[i] - b[i]| over equally long spans (infinity when the lengths differ or a value is
// not finite, so that such a result can never pass a tolerance).
float MaxAbsDiff(std::span<const float> a, std::span<const float> b);

}  // namespace slotserve::golden
