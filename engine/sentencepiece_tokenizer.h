// A SentencePiece model file (<model>/tokenizer.model) as a Tokenizer.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/tokenizer.h"

namespace slotserve::engine {

class SentencePieceModel;

class SentencePieceTokenizer final : public Tokenizer {
 public:
  // NOT_FOUND when the file does not exist, INVALID_ARGUMENT when it is not a SentencePiece
  // model.
  static absl::StatusOr<std::unique_ptr<SentencePieceTokenizer>> Load(
      const std::filesystem::path& file);

  ~SentencePieceTokenizer() override;

  using Tokenizer::Encode;
  // SentencePiece has no special-token parsing: `parse_special` changes nothing.
  absl::StatusOr<std::vector<int32_t>> Encode(std::string_view text,
                                              bool parse_special) const override;
  std::string Decode(std::span<const int32_t> ids) const override;

  int piece_count() const override;
  int bos_id() const override;
  int eos_id() const override;
  bool adds_bos() const override { return true; }
  bool adds_eos() const override { return false; }
  std::string_view IdToPiece(int32_t id) const override;
  std::string_view TokenBytes(int32_t id, bool at_sequence_start = false) const override;

 private:
  SentencePieceTokenizer();

  std::unique_ptr<SentencePieceModel> model_;
  std::vector<std::string> pieces_;
  std::vector<std::string> token_bytes_;
  std::vector<bool> drops_space_at_start_;
};

}  // namespace slotserve::engine
