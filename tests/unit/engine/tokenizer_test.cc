// Tokenizer: round trips through a real SentencePiece model with byte fallback (trained by
// spm_train in the fixture), and a clear NOT_FOUND for a missing model file.
#include "engine/tokenizer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/engine/tiny_tokenizer.h"

namespace slotserve::engine {
namespace {

using testing::SampleTexts;
using testing::TinyTokenizerOrFail;

TEST(TokenizerTest, RoundTripsTextAndUsesByteFallbackForRareCharacters) {
  const Tokenizer* tokenizer = TinyTokenizerOrFail();
  if (tokenizer == nullptr) return;
  EXPECT_EQ(tokenizer->bos_id(), 1);
  EXPECT_EQ(tokenizer->eos_id(), 2);
  bool saw_byte_piece = false;
  for (const std::string& text : SampleTexts()) {
    absl::StatusOr<std::vector<int32_t>> ids = tokenizer->Encode(text);
    ASSERT_TRUE(ids.ok()) << ids.status();
    EXPECT_EQ(tokenizer->Decode(*ids), text);
    for (int32_t id : *ids) {
      if (tokenizer->IdToPiece(id).substr(0, 3) == "<0x") saw_byte_piece = true;
    }
  }
  EXPECT_TRUE(saw_byte_piece) << "the samples should exercise byte-fallback pieces";
}

TEST(TokenizerTest, MissingFileIsNotFoundAndNamesTheFile) {
  absl::StatusOr<std::unique_ptr<Tokenizer>> missing =
      Tokenizer::LoadFromModelDir("/nonexistent/model");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("tokenizer.model"), std::string::npos);
}

}  // namespace
}  // namespace slotserve::engine
