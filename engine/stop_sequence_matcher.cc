#include "engine/stop_sequence_matcher.h"

#include <algorithm>

namespace slotserve::engine {

StopSequenceMatcher::StopSequenceMatcher(std::vector<std::string> stop_sequences)
    : stop_sequences_(std::move(stop_sequences)) {}

StopSequenceMatcher::Result StopSequenceMatcher::Push(std::string_view delta,
                                                      bool stopping_allowed) {
  Result result;
  held_.append(delta);
  if (stop_sequences_.empty()) {
    result.text.swap(held_);
    return result;
  }
  // Everything released earlier was ruled out as the start of a match, so a match can only
  // start inside held_. Take the earliest (the longest of those starting there).
  while (true) {
    size_t earliest = std::string::npos;
    size_t earliest_end = 0;
    for (const std::string& stop : stop_sequences_) {
      const size_t at = held_.find(stop);
      if (at == std::string::npos) continue;
      if (at < earliest || (at == earliest && at + stop.size() > earliest_end)) {
        earliest = at;
        earliest_end = at + stop.size();
      }
    }
    if (earliest == std::string::npos) break;
    if (stopping_allowed) {
      result.text.append(held_, 0, earliest);
      result.stopped = true;
      held_.clear();
      return result;
    }
    // Too early to stop: the match is ordinary text. Release it and look again after it.
    result.text.append(held_, 0, earliest_end);
    held_.erase(0, earliest_end);
  }
  const size_t keep = LongestPartialMatchAtEnd();
  result.text.append(held_, 0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return result;
}

std::string StopSequenceMatcher::Flush() {
  std::string text;
  text.swap(held_);
  return text;
}

size_t StopSequenceMatcher::LongestPartialMatchAtEnd() const {
  size_t longest = 0;
  for (const std::string& stop : stop_sequences_) {
    const size_t max_length = std::min(stop.size() - 1, held_.size());
    for (size_t length = max_length; length > longest; --length) {
      if (std::string_view(held_).substr(held_.size() - length) ==
          std::string_view(stop).substr(0, length)) {
        longest = length;
        break;
      }
    }
  }
  return longest;
}

}  // namespace slotserve::engine
