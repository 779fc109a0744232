// HfTokenizer through Tokenizer::LoadFromModelDir on a small SentencePiece-style tokenizer.json
// (the fuzz seed tests/fuzz/corpus/hf_tokenizer/byte_fallback_0.json, written by
// make_seed_corpus.py): ids worked out by hand from its vocabulary and merges, special tokens
// parsed only when asked, the leading space stripped once, NOT_FOUND naming both file names.
// The real Llama-2/3, Qwen3 and Gemma-3 files are checked against transformers.js in
// tests/unit/hf_tokenizer.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/incremental_detokenizer.h"
#include "engine/tokenizer.h"

namespace slotserve::engine {
namespace {

std::filesystem::path ModelDirWithTokenizerJson() {
  std::ifstream seed(std::filesystem::path(SLOTSERVE_SOURCE_DIR) /
                         "tests/fuzz/corpus/hf_tokenizer/byte_fallback_0.json",
                     std::ios::binary);
  std::stringstream buffer;
  buffer << seed.rdbuf();
  const std::string text = buffer.str();
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("hf_tokenizer_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "tokenizer.json", std::ios::binary) << text.substr(0, text.find('\0'));
  std::ofstream(dir / "tokenizer_config.json")
      << R"({"bos_token": {"content": "<s>"}, "eos_token": "</s>", "add_bos_token": true,
            "model_max_length": 4096})";
  return dir;
}

// Ids of the seed's vocabulary: <unk> <s> </s>, <0x00>..<0xFF> at 3..258, then these.
constexpr int32_t kSpace = 259, kE = 261, kL = 262, kO = 263, kR = 265, kD = 266, kSpaceW = 267,
                  kLL = 268, kSpaceH = 269;

TEST(HfTokenizerTest, LoadsTokenizerJsonWhenThereIsNoTokenizerModel) {
  const std::filesystem::path dir = ModelDirWithTokenizerJson();
  absl::StatusOr<std::unique_ptr<Tokenizer>> tokenizer = Tokenizer::LoadFromModelDir(dir);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  const Tokenizer& t = **tokenizer;
  EXPECT_EQ(t.piece_count(), 270);
  EXPECT_EQ(t.bos_id(), 1);
  EXPECT_EQ(t.eos_id(), 2);
  EXPECT_TRUE(t.adds_bos());
  EXPECT_FALSE(t.adds_eos());
  EXPECT_EQ(t.model_max_length(), 4096);
  EXPECT_EQ(t.IdToPiece(3 + 0x41), "<0x41>");

  // "▁Hello▁world": merges "▁ w", then "l l", then "▁ H" (their ranks).
  absl::StatusOr<std::vector<int32_t>> ids = t.Encode("Hello world");
  ASSERT_TRUE(ids.ok()) << ids.status();
  const std::vector<int32_t> expected = {kSpaceH, kE, kLL, kO, kSpaceW, kO, kR, kL, kD};
  EXPECT_EQ(*ids, expected);
  EXPECT_EQ(t.Decode(*ids), "Hello world");  // the prepended "▁" stripped once

  // "x" is not in the vocabulary: byte fallback. "<s>" is special: matched only when asked.
  EXPECT_EQ(t.Encode("<s>x", /*parse_special=*/true).value(),
            (std::vector<int32_t>{1, kSpace, 3 + 'x'}));
  EXPECT_EQ(t.Encode("<s>x", /*parse_special=*/false).value(),
            (std::vector<int32_t>{kSpace, 3 + '<', 3 + 's', 3 + '>', 3 + 'x'}));
  EXPECT_EQ(t.TokenBytes(1), "");  // special tokens decode to nothing
  EXPECT_EQ(t.TokenBytes(3 + 0xE2), "\xE2");
  EXPECT_FALSE(t.Encode("bad \xFF byte").ok());
  std::filesystem::remove_all(dir);
}

TEST(HfTokenizerTest, StreamingStripsTheFirstSpaceOnceEvenAfterALoneSpacePiece) {
  const std::filesystem::path dir = ModelDirWithTokenizerJson();
  std::unique_ptr<Tokenizer> tokenizer = Tokenizer::LoadFromModelDir(dir).value();
  // " world" -> "▁▁world": the decoder strips one leading space, so the text is " world".
  const std::vector<int32_t> ids = tokenizer->Encode(" world").value();
  ASSERT_EQ(ids.front(), kSpace);
  IncrementalDetokenizer stream(tokenizer.get());
  std::string streamed;
  for (int32_t id : ids) streamed += stream.Push(id);
  streamed += stream.Flush();
  EXPECT_EQ(tokenizer->Decode(ids), " world");
  EXPECT_EQ(streamed, " world");
  std::filesystem::remove_all(dir);
}

TEST(HfTokenizerTest, ADirectoryWithNeitherFileIsNotFoundNamingBoth) {
  absl::StatusOr<std::unique_ptr<Tokenizer>> missing =
      Tokenizer::LoadFromModelDir("/nonexistent/model");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("tokenizer.model"), std::string::npos);
  EXPECT_NE(missing.status().message().find("tokenizer.json"), std::string::npos);
}

}  // namespace
}  // namespace slotserve::engine
