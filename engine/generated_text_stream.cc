#include "engine/generated_text_stream.h"

namespace slotserve::engine {

GeneratedTextStream::GeneratedTextStream(const Tokenizer* tokenizer,
                                         std::span<const int32_t> prompt_ids,
                                         std::vector<std::string> stop_sequences)
    : stop_matcher_(std::move(stop_sequences)) {
  if (tokenizer != nullptr) {
    detokenizer_.emplace(tokenizer);
    detokenizer_->Prime(prompt_ids);
  }
}

GeneratedTextStream::Update GeneratedTextStream::Push(int32_t id, bool stopping_allowed) {
  Update update;
  if (!detokenizer_) return update;
  StopSequenceMatcher::Result result = stop_matcher_.Push(detokenizer_->Push(id), stopping_allowed);
  update.text = std::move(result.text);
  update.stop_sequence_matched = result.stopped;
  return update;
}

std::string GeneratedTextStream::Finish() {
  if (!detokenizer_) return {};
  std::string text = stop_matcher_.Push(detokenizer_->Flush(), /*stopping_allowed=*/false).text;
  text += stop_matcher_.Flush();
  return text;
}

}  // namespace slotserve::engine
