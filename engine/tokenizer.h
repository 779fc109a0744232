// The model directory's SentencePiece tokenizer (<model>/tokenizer.model, DESIGN §2).
// Immutable after loading, so any thread may use it concurrently.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace slotserve::engine {

class SentencePieceModel;

class Tokenizer {
 public:
  // The file name inside a model directory.
  static constexpr std::string_view kFileName = "tokenizer.model";

  // Loads a SentencePiece model file. NOT_FOUND when the file does not exist,
  // INVALID_ARGUMENT when it is not a SentencePiece model.
  static absl::StatusOr<std::unique_ptr<Tokenizer>> Load(const std::filesystem::path& file);
  // Loads <model_dir>/tokenizer.model (same errors; NOT_FOUND says text input needs it).
  static absl::StatusOr<std::unique_ptr<Tokenizer>> LoadFromModelDir(
      const std::filesystem::path& model_dir);

  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // Text -> ids, without BOS/EOS (callers add BOS when they want it). INVALID_ARGUMENT when
  // the text is not valid UTF-8.
  absl::StatusOr<std::vector<int32_t>> Encode(std::string_view text) const;
  // Ids -> text, as SentencePiece decodes a whole sequence. Ids outside [0, piece_count())
  // decode to nothing.
  std::string Decode(std::span<const int32_t> ids) const;

  int piece_count() const;  // ids are in [0, piece_count())
  int bos_id() const;       // -1 when the model has none
  int eos_id() const;       // -1 when the model has none
  std::string_view IdToPiece(
      int32_t id) const;  // the raw piece ("▁the", "<0xE2>"); "" if out of range

  // The bytes a token contributes to decoded text: "▁" becomes a space, a byte-fallback
  // piece (<0xE2>) its single byte, control and unused pieces nothing, the unknown piece
  // SentencePiece's " ⁇ ". May be an incomplete UTF-8 sequence (byte pieces). Pass
  // `at_sequence_start` when no text has been decoded before this token in its sequence:
  // SentencePiece then drops the dummy-prefix space of a normal piece starting with "▁".
  std::string_view TokenBytes(int32_t id, bool at_sequence_start = false) const;

 private:
  Tokenizer();

  std::unique_ptr<SentencePieceModel> model_;
  std::vector<std::string> pieces_;
  std::vector<std::string> token_bytes_;
  std::vector<bool> drops_space_at_start_;
};

}  // namespace slotserve::engine
