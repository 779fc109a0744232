#include "tests/unit/engine/tiny_tokenizer.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include "absl/strings/str_cat.h"

namespace slotserve::engine::testing {
namespace {

// Common words (they become whole pieces) and accented Latin that is frequent enough to get
// its own characters; the rare characters of SampleTexts() are not in here at all.
std::string Corpus() {
  const std::vector<std::string> words = {
      "the",   "quick", "brown",  "fox",  "jumps", "over",  "lazy",  "dog",    "café",
      "naïve", "über",  "straße", "déjà", "vu",    "hello", "world", "stop",   "here",
      "END",   "token", "text",   "slot", "serve", "state", "model", "stream", "señor"};
  std::string corpus;
  uint64_t x = 12345;
  for (int line = 0; line < 400; ++line) {
    for (int w = 0; w < 12; ++w) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      corpus += words[(x >> 33) % words.size()];
      corpus += (w == 11) ? "." : " ";
    }
    corpus += "\n";
  }
  return corpus;
}

std::unique_ptr<Tokenizer> Train(std::string* why) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / absl::StrCat("slotserve_tiny_spm_", getpid());
  std::filesystem::create_directories(dir);
  {
    std::ofstream corpus(dir / "corpus.txt");
    corpus << Corpus();
  }
  const std::string command = absl::StrCat(
      "spm_train --input=", (dir / "corpus.txt").string(),
      " --model_prefix=", (dir / "tokenizer").string(),
      " --vocab_size=400 --model_type=bpe --byte_fallback=true --character_coverage=1.0"
      " --hard_vocab_limit=false --bos_id=1 --eos_id=2 --unk_id=0 --pad_id=-1"
      " --minloglevel=2 > ",
      (dir / "spm_train.log").string(), " 2>&1");
  const int rc = std::system(command.c_str());
  std::unique_ptr<Tokenizer> tokenizer;
  if (rc != 0) {
    *why = absl::StrCat("spm_train failed (exit ", rc, "); see ", (dir / "spm_train.log").string());
    return nullptr;
  }
  absl::StatusOr<std::unique_ptr<Tokenizer>> loaded = Tokenizer::Load(dir / "tokenizer.model");
  if (!loaded.ok()) {
    *why = std::string(loaded.status().message());
    return nullptr;
  }
  std::filesystem::remove_all(dir);
  return std::move(*loaded);
}

}  // namespace

const Tokenizer* TinyTokenizer(std::string* why) {
  static std::string failure;
  static const std::unique_ptr<Tokenizer> tokenizer = Train(&failure);
  if (tokenizer == nullptr) *why = failure;
  return tokenizer.get();
}

const Tokenizer* TinyTokenizerOrFail() {
  std::string why;
  const Tokenizer* tokenizer = TinyTokenizer(&why);
  if (tokenizer == nullptr) ADD_FAILURE() << "no SentencePiece model for the test: " << why;
  return tokenizer;
}

const std::vector<std::string>& SampleTexts() {
  static const std::vector<std::string> texts = {
      "the quick brown fox", "café über straße déjà vu", "hello 🙂 world",
      "日本語のテキスト",    "señor naïve → ∑ ok",       "a🙂🙃b",
      "END of the text END",
  };
  return texts;
}

}  // namespace slotserve::engine::testing
