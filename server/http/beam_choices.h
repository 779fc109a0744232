// Beam search over the HTTP API: OpenAI's answers know choices, not hypotheses, so a beam
// request's n-best become choices 0..n-1 (best first), each with its text, ids, finish reason
// and length, as vLLM answers use_beam_search. The engine sends a beam request's result as
// one chunk (the best hypothesis) and one Finished carrying every hypothesis; this sink turns
// that into one chunk and one Finished per hypothesis, so the front end streams and answers
// it as it does n choices.
#pragma once

#include <memory>

#include "engine/generation_events.h"

namespace slotserve::server::http {

class BeamChoicesSink final : public engine::GenerationSink {
 public:
  // Passes the reshaped events on to `choices` (the request's event queue).
  explicit BeamChoicesSink(std::shared_ptr<engine::GenerationSink> choices)
      : choices_(std::move(choices)) {}

  // The best hypothesis's chunk: dropped (every hypothesis comes with the Finished).
  void OnTokens(const engine::TokenChunk& chunk) override;
  // With hypotheses: one chunk and one Finished per hypothesis (the last marked request_done).
  // Without (an error, a cancel): passed on as it is.
  void OnFinished(const engine::Finished& finished) override;

 private:
  std::shared_ptr<engine::GenerationSink> choices_;
};

}  // namespace slotserve::server::http
