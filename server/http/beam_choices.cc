#include "server/http/beam_choices.h"

#include <utility>

namespace slotserve::server::http {

void BeamChoicesSink::OnTokens(const engine::TokenChunk& /*chunk*/) {}

void BeamChoicesSink::OnFinished(const engine::Finished& finished) {
  if (!finished.status.ok() || finished.hypotheses.empty()) {
    choices_->OnFinished(finished);
    return;
  }
  for (size_t i = 0; i < finished.hypotheses.size(); ++i) {
    const engine::BeamHypothesis& hypothesis = finished.hypotheses[i];
    engine::TokenChunk chunk;
    chunk.choice_index = static_cast<int32_t>(i);
    chunk.ids = hypothesis.ids;
    chunk.text = hypothesis.text;
    choices_->OnTokens(chunk);
    engine::Finished choice = finished;
    choice.hypotheses.clear();
    choice.choice_index = static_cast<int32_t>(i);
    choice.reason = hypothesis.reason;
    choice.generated_tokens = static_cast<int32_t>(hypothesis.ids.size());
    choice.request_done = i + 1 == finished.hypotheses.size();
    choices_->OnFinished(choice);
  }
}

}  // namespace slotserve::server::http
