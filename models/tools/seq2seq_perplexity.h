// Test-set perplexity of an encoder–decoder model through the engine (slotserve-perplexity with
// --source-ids/--target-ids), with the protocol of python/evaluate_seq2seq_perplexity.py and of
// training (python/train_seq2seq.py), so the engine's figure and the reference's compare pair
// for pair: each source is encoded as given, the decoder reads [decoder_start_id, y_0 .. y_n-1]
// in one Prefill and every one of [y_0 .. y_n-1, eos_id] is scored, -log softmax(logits)[token].
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/language_model.h"

namespace slotserve::models {

struct SentencePair {
  std::vector<int32_t> source;  // as the encoder reads it (a text source ends with eos_id)
  std::vector<int32_t> target;  // the reference translation's ids
};

// Line i of `source_path` with line i of `target_path` (token ids separated by spaces); both
// files must have the same number of lines, and no line may be empty. Errors name the file and
// line.
absl::StatusOr<std::vector<SentencePair>> ReadSentencePairs(const std::string& source_path,
                                                            const std::string& target_path);

struct PairTotals {
  double nll = 0.0;    // summed -log p, nats
  int64_t tokens = 0;  // scored tokens: each target's ids and its eos
  int64_t pairs = 0;
};

// Scores `pairs` (up to max_tokens scored tokens when it is > 0, always at least one pair) on
// `model`, an encoder–decoder one, one pair at a time in one state slot. A source the encoder
// refuses (too long, outside the vocabulary) or a target longer than the decoder's positions
// is an error that names the pair.
absl::StatusOr<PairTotals> ScoreSentencePairs(LanguageModel& model,
                                              const std::vector<SentencePair>& pairs,
                                              int64_t max_tokens);

}  // namespace slotserve::models
