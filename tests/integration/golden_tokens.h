// The golden data of tests/golden/<folder>/<variant>/ (golden.json and golden_logits.f32, see
// tests/golden/README.md) for the integration tests that serve golden models through the real
// server and compare its greedy tokens with the reference's argmax.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace slotserve::testing {

struct Golden {
  std::vector<int32_t> tokens;
  int vocab = 0;
  std::vector<float> logits;  // [tokens, vocab]
};

// `logits_file`: golden_logits.f32, or golden_logits_int8_activations.f32 of the int8 variants.
Golden LoadGolden(const std::filesystem::path& dir,
                  const std::string& logits_file = "golden_logits.f32");

// The reference's greedy choice after tokens[0..row].
int32_t Argmax(const Golden& golden, size_t row);

}  // namespace slotserve::testing
