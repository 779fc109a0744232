// The golden data of tests/golden/seq2seq/<variant>/ (see README.md, "Encoder–decoder models"):
// the source, the target and the reference's logits at every target position.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace slotserve::golden {

struct Seq2seqGolden {
  std::vector<int32_t> source;
  std::vector<int32_t> target;
  int vocab_size = 0;
  std::vector<float> logits;  // [target.size(), vocab]: row t predicts target[t]

  std::span<const float> Row(size_t t) const {
    return std::span<const float>(logits).subspan(t * vocab_size, vocab_size);
  }
};

// The folder holding one directory per encoder-decoder variant (set by CMake); the variants
// are GoldenVariants(Seq2seqGoldenDir()) (golden_data.h).
std::filesystem::path Seq2seqGoldenDir();

// `logits_file`: golden_logits.f32, or golden_logits_int8_activations.f32 of the *_int8
// variants (the engine's --int8-activations). A file that cannot be read whole fails the
// calling test.
Seq2seqGolden LoadSeq2seqGolden(const std::filesystem::path& dir,
                                const std::string& logits_file = "golden_logits.f32");

}  // namespace slotserve::golden
