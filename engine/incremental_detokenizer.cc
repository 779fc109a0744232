#include "engine/incremental_detokenizer.h"

#include "base/utf8.h"

namespace slotserve::engine {
IncrementalDetokenizer::IncrementalDetokenizer(const Tokenizer* tokenizer)
    : tokenizer_(tokenizer) {}

void IncrementalDetokenizer::Prime(std::span<const int32_t> prompt_ids) {
  for (int32_t id : prompt_ids) Push(id);
}

std::string IncrementalDetokenizer::Push(int32_t id) {
  const std::string_view bytes = tokenizer_->TokenBytes(id, at_sequence_start_);
  // As the tokenizer's decoder: SentencePiece's start lasts until text appears, so after a
  // lone "▁" (which yields nothing there) the next piece's leading space is dropped too
  // (found by tests/fuzz/fuzz_detokenizer; regression test in tests/unit/engine), while
  // tokenizer.json's decoders strip one space only (Tokenizer::EndsSequenceStart).
  if (at_sequence_start_ && tokenizer_->EndsSequenceStart(id)) at_sequence_start_ = false;
  if (bytes.empty()) return {};
  pending_.append(bytes);
  return TakeCompleteCharacters(/*at_end=*/false);
}

std::string IncrementalDetokenizer::Flush() { return TakeCompleteCharacters(/*at_end=*/true); }

std::string IncrementalDetokenizer::TakeCompleteCharacters(bool at_end) {
  std::string out;
  const size_t consumed = base::AppendCompleteUtf8(pending_, at_end, &out);
  pending_.erase(0, consumed);
  return out;
}

}  // namespace slotserve::engine
