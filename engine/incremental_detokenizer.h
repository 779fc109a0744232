// Turns a stream of generated token ids into text deltas that never split a UTF-8 character:
// bytes of an incomplete character (e.g. from byte-fallback pieces <0xE2><0x82>) are held
// back until the character is complete. Bytes that can never form a valid character become
// U+FFFD, as SentencePiece's own decoder does, so the deltas always concatenate to valid
// UTF-8 and, for ids that decode cleanly, to exactly Tokenizer::Decode of the ids.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "engine/tokenizer.h"

namespace slotserve::engine {

class IncrementalDetokenizer {
 public:
  // `tokenizer` must outlive this object.
  explicit IncrementalDetokenizer(const Tokenizer* tokenizer);

  // Feeds the prompt: its text is not returned, but it decides whether the first generated
  // text starts the sequence (SentencePiece then drops its leading space) and may leave an
  // incomplete character for the generated tokens to finish.
  void Prime(std::span<const int32_t> prompt_ids);
  // Appends one token; returns the text it completed (possibly empty).
  std::string Push(int32_t id);
  // End of the sequence: returns what is still held (each stray byte as U+FFFD).
  std::string Flush();
  // No text yet: the next token's leading space is dropped (Tokenizer::TokenBytes).
  bool at_sequence_start() const { return at_sequence_start_; }

 private:
  // Moves every complete (or definitely invalid) character from pending_ to the result.
  std::string TakeCompleteCharacters(bool at_end);

  const Tokenizer* tokenizer_;
  std::string pending_;  // bytes of a character not yet complete
  bool at_sequence_start_ = true;
};

}  // namespace slotserve::engine
