#include "engine/tokenizer.h"

#include <system_error>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "engine/hf_tokenizer.h"
#include "engine/sentencepiece_tokenizer.h"

namespace slotserve::engine {

absl::StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::Load(const std::filesystem::path& file) {
  if (file.extension() == ".json") {
    SLOTSERVE_ASSIGN_OR_RETURN(std::unique_ptr<HfTokenizer> tokenizer, HfTokenizer::Load(file));
    return tokenizer;
  }
  SLOTSERVE_ASSIGN_OR_RETURN(std::unique_ptr<SentencePieceTokenizer> tokenizer,
                             SentencePieceTokenizer::Load(file));
  return tokenizer;
}

absl::StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::LoadFromModelDir(
    const std::filesystem::path& model_dir) {
  std::error_code error;
  for (std::string_view name : {kFileName, kHuggingFaceFileName}) {
    const std::filesystem::path file = model_dir / name;
    if (std::filesystem::exists(file, error)) return Load(file);
  }
  return absl::NotFoundError(
      absl::StrCat(model_dir.string(), " has neither ", std::string(kFileName), " nor ",
                   std::string(kHuggingFaceFileName),
                   ": text prompts and stop sequences need one; token-id requests work without"));
}

}  // namespace slotserve::engine
