// The model directory's tokenizer (docs/MODEL_FORMAT.md): text <-> ids. Two implementations sit
// behind this interface: SentencePieceTokenizer (<model>/tokenizer.model) and HfTokenizer
// (<model>/tokenizer.json, the Hugging Face `tokenizers` format, as Hub downloads ship it).
// Immutable after loading, so any thread may use one concurrently.
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

class Tokenizer {
 public:
  // The file names inside a model directory, in the order LoadFromModelDir tries them.
  static constexpr std::string_view kFileName = "tokenizer.model";
  static constexpr std::string_view kHuggingFaceFileName = "tokenizer.json";

  // Loads one tokenizer file: a file named *.json as a Hugging Face tokenizer.json (with the
  // tokenizer_config.json and special_tokens_map.json beside it, if there), anything else as
  // a SentencePiece model. NOT_FOUND when the file does not exist, INVALID_ARGUMENT (naming
  // the file and the offending field) when it is not a tokenizer this server can apply.
  static absl::StatusOr<std::unique_ptr<Tokenizer>> Load(const std::filesystem::path& file);
  // Loads <model_dir>/tokenizer.model when present, else <model_dir>/tokenizer.json (same
  // errors; NOT_FOUND when neither is there says text input needs one).
  static absl::StatusOr<std::unique_ptr<Tokenizer>> LoadFromModelDir(
      const std::filesystem::path& model_dir);

  virtual ~Tokenizer() = default;
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // Text -> ids, without BOS/EOS or any other post-processing (callers add BOS when they
  // want it; adds_bos() says whether the tokenizer's own configuration would). With
  // `parse_special`, special tokens written in the text ("<|im_start|>", "</s>") become their
  // ids, as a rendered chat template needs; without, they are tokenised as plain text where
  // the tokenizer allows it. INVALID_ARGUMENT when the text is not valid UTF-8.
  absl::StatusOr<std::vector<int32_t>> Encode(std::string_view text) const {
    return Encode(text, /*parse_special=*/false);
  }
  virtual absl::StatusOr<std::vector<int32_t>> Encode(std::string_view text,
                                                      bool parse_special) const = 0;
  // Ids -> text, as the tokenizer's own decoder decodes a whole sequence. Ids outside
  // [0, piece_count()) decode to nothing.
  virtual std::string Decode(std::span<const int32_t> ids) const = 0;

  virtual int piece_count() const = 0;  // ids are in [0, piece_count())
  virtual int bos_id() const = 0;       // -1 when the model has none
  virtual int eos_id() const = 0;       // -1 when the model has none
  // Whether the tokenizer's configuration puts BOS / EOS around an encoded sequence
  // (tokenizer.json's post-processor, tokenizer_config.json's add_bos_token/add_eos_token).
  // SentencePiece models say nothing of it: true / false there, as Llama-style models expect.
  virtual bool adds_bos() const = 0;
  virtual bool adds_eos() const = 0;
  // tokenizer_config.json's model_max_length; 0 when not known.
  virtual int64_t model_max_length() const { return 0; }
  // The raw piece ("▁the", "<0xE2>", "Ġthe"); "" if out of range.
  virtual std::string_view IdToPiece(int32_t id) const = 0;

  // The bytes a token contributes to decoded text: "▁" becomes a space, a byte-fallback
  // piece (<0xE2>) or a byte-level piece its bytes, control and unused pieces nothing, the
  // unknown piece what the decoder writes for it. May be an incomplete UTF-8 sequence (byte
  // pieces). Pass `at_sequence_start` when no text has been decoded before this token in its
  // sequence: SentencePiece-style decoders then drop the dummy-prefix space of a piece
  // starting with "▁".
  virtual std::string_view TokenBytes(int32_t id, bool at_sequence_start = false) const = 0;
  // Whether decoding `id` at a sequence start ends the start, so that the next token keeps
  // its leading space. SentencePiece: when the token yields text there (after a lone "▁",
  // which yields nothing, the next piece's space is dropped too). tokenizer.json's decoders
  // strip the sequence's first space once: any token with text, even a lone "▁", ends it.
  virtual bool EndsSequenceStart(int32_t id) const { return !TokenBytes(id, true).empty(); }

 protected:
  Tokenizer() = default;
};

}  // namespace slotserve::engine
