// One request's generated text as it streams: token ids -> UTF-8-safe text deltas
// (IncrementalDetokenizer) -> stop-sequence search with hold-back (StopSequenceMatcher).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/incremental_detokenizer.h"
#include "engine/stop_sequence_matcher.h"
#include "engine/tokenizer.h"

namespace slotserve::engine {

class GeneratedTextStream {
 public:
  // Without a tokenizer (null) there is no text: every update is empty and stop sequences
  // must be empty. The tokenizer must outlive the stream.
  GeneratedTextStream(const Tokenizer* tokenizer, std::span<const int32_t> prompt_ids,
                      std::vector<std::string> stop_sequences);

  struct Update {
    std::string text;                    // safe to stream now
    bool stop_sequence_matched = false;  // `text` ends right before the match
  };
  // Appends one generated token. `stopping_allowed` is false before min_new_tokens.
  Update Push(int32_t id, bool stopping_allowed);
  // Generation ended for a reason other than a stop sequence: everything still held back.
  std::string Finish();

 private:
  std::optional<IncrementalDetokenizer> detokenizer_;
  StopSequenceMatcher stop_matcher_;
};

}  // namespace slotserve::engine
