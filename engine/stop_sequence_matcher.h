// Finds stop sequences in streamed text. Text that could still turn out to be the start of a
// stop sequence is held back, so the matched sequence (and anything after it) is never
// streamed. Stop sequences are valid UTF-8, so a held-back suffix always starts on a
// character boundary and the released text never splits a character.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace slotserve::engine {

class StopSequenceMatcher {
 public:
  // `stop_sequences` must be non-empty strings (checked by request validation).
  explicit StopSequenceMatcher(std::vector<std::string> stop_sequences);

  struct Result {
    std::string text;      // safe to stream now
    bool stopped = false;  // a stop sequence was found; `text` is everything before it
  };

  // Appends a text delta. With `stopping_allowed` false (before min_new_tokens), a complete
  // match does not stop: it is released like any text.
  Result Push(std::string_view delta, bool stopping_allowed);
  // End of generation for another reason: releases the held-back text.
  std::string Flush();

 private:
  // Length of the longest suffix of held_ that is a proper prefix of some stop sequence.
  size_t LongestPartialMatchAtEnd() const;

  std::vector<std::string> stop_sequences_;
  std::string held_;
};

}  // namespace slotserve::engine
