#include "engine/beam_request.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/generated_text_stream.h"
#include "engine/token_logprobs.h"

namespace slotserve::engine {

BeamRequest::BeamRequest(BeamSearchOptions options, std::vector<int> slots,
                         const Tokenizer* tokenizer, std::span<const int32_t> prompt_ids)
    : search_(std::move(options), std::move(slots)),
      tokenizer_(tokenizer),
      prompt_ids_(prompt_ids) {}

BeamRequest::StepOutcome BeamRequest::Advance(std::span<const float> raw_rows, int vocab,
                                              models::StateArena& arena) {
  const size_t columns = static_cast<size_t>(vocab);
  logprob_rows_.resize(raw_rows.size());
  for (size_t row = 0; row * columns < raw_rows.size(); ++row) {
    LogSoftmax(raw_rows.subspan(row * columns, columns),
               std::span<double>(logprob_rows_).subspan(row * columns, columns));
  }
  BeamStepPlan plan = search_.Advance(logprob_rows_, vocab);
  StepOutcome outcome{.released = std::move(plan.released), .status = absl::OkStatus()};
  // No destination is a source (beam_search.h), so the order does not matter.
  for (const BeamCopy& copy : plan.copies) {
    if (absl::Status copied = arena.Copy(copy.src, copy.dst); !copied.ok()) {
      outcome.status = absl::InternalError(absl::StrCat("beam search: copying slot ", copy.src,
                                                        " to ", copy.dst, ": ", copied.message()));
      break;
    }
  }
  return outcome;
}

std::vector<BeamHypothesis> BeamRequest::Results() const {
  std::vector<BeamHypothesis> results = search_.Best();
  for (BeamHypothesis& hypothesis : results) {
    GeneratedTextStream text(tokenizer_, prompt_ids_, {});
    for (int32_t id : hypothesis.ids) hypothesis.text += text.Push(id, false).text;
    hypothesis.text += text.Finish();
  }
  return results;
}

}  // namespace slotserve::engine
