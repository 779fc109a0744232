#include "models/tools/seq2seq_perplexity.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "models/tools/id_lines.h"
#include "models/tools/token_scores.h"

namespace slotserve::models {

absl::StatusOr<std::vector<SentencePair>> ReadSentencePairs(const std::string& source_path,
                                                            const std::string& target_path) {
  SLOTSERVE_ASSIGN_OR_RETURN(auto sources,
                             ReadIdLines("--source-ids", source_path, EmptyLines::kRefuse));
  SLOTSERVE_ASSIGN_OR_RETURN(auto targets,
                             ReadIdLines("--target-ids", target_path, EmptyLines::kRefuse));
  if (sources.size() != targets.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source_path, " has ", sources.size(), " lines but ", target_path, " has ",
                     targets.size(), "; expected one target per source"));
  }
  std::vector<SentencePair> pairs(sources.size());
  for (size_t i = 0; i < pairs.size(); ++i) {
    pairs[i] = {std::move(sources[i]), std::move(targets[i])};
  }
  return pairs;
}

absl::StatusOr<PairTotals> ScoreSentencePairs(LanguageModel& model,
                                              const std::vector<SentencePair>& pairs,
                                              int64_t max_tokens) {
  const Seq2seqShape* shape = model.seq2seq();
  if (shape == nullptr) {
    return absl::InvalidArgumentError(
        "sentence pairs score an encoder-decoder model; this one is decoder-only");
  }
  const int vocab = model.config().vocab_size;
  const int32_t eos = model.config().eos_id;
  if (eos < 0 || eos >= vocab) {
    return absl::InvalidArgumentError(absl::StrCat("the model's eos_id ", eos,
                                                   " is not a token of its vocabulary [0, ", vocab,
                                                   "): the end of a target cannot be scored"));
  }
  SLOTSERVE_ASSIGN_OR_RETURN(std::unique_ptr<StateArena> states, model.AllocateStates(1));
  PairTotals totals;
  std::vector<int32_t> inputs;
  std::vector<float> logits;
  for (size_t index = 0; index < pairs.size(); ++index) {
    const SentencePair& pair = pairs[index];
    const int64_t scored = static_cast<int64_t>(pair.target.size()) + 1;
    if (max_tokens > 0 && totals.pairs > 0 && totals.tokens + scored > max_tokens) break;
    const auto failed = [&](const absl::Status& status) {
      return absl::Status(status.code(), absl::StrCat("pair ", index + 1, " (line ", index + 1,
                                                      " of both files): ", status.message()));
    };
    if (scored > model.max_positions()) {
      return failed(absl::InvalidArgumentError(absl::StrCat(
          "the decoder reads ", scored, " inputs (decoder_start_id and the ", pair.target.size(),
          " target ids), more than its ", model.max_positions(), " positions")));
    }
    for (const int32_t id : pair.target) {
      if (id >= vocab) {
        return failed(absl::InvalidArgumentError(absl::StrCat(
            "target token ", id, " is outside the model's vocabulary [0, ", vocab, ")")));
      }
    }
    if (absl::Status encoded = model.Encode(*states, 0, pair.source); !encoded.ok()) {
      return failed(encoded);
    }
    inputs.assign({shape->decoder_start_id});
    inputs.insert(inputs.end(), pair.target.begin(), pair.target.end());
    logits.resize(inputs.size() * vocab);
    if (absl::Status ran = model.Prefill(*states, 0, inputs, LogitsWanted::kEveryToken, logits);
        !ran.ok()) {
      return failed(ran);
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      const int32_t label = i < pair.target.size() ? pair.target[i] : eos;
      totals.nll +=
          NegativeLogLikelihood(std::span<const float>(logits).subspan(i * vocab, vocab), label);
    }
    totals.tokens += scored;
    ++totals.pairs;
  }
  return totals;
}

}  // namespace slotserve::models
