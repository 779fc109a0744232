// One beam-search request's side of the engine (BeamOptions, docs/ARCHITECTURE.md "Encoder–decoder
// models"): the search (beam_search.h) plus what ties it to the state arena and the client. The
// request holds `width` slots from admission; its prompt is prefilled once in the first, and each
// step every live hypothesis feeds its last token in its own slot beside the other requests' rows
// (one StepAndSample, whose raw-logits rows come back here). Forks are StateArena::Copy, the
// primitive n > 1 uses; a seq2seq request's slot carries its cross memory, so the copies fork
// that too. Engine thread only.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "engine/beam_search.h"
#include "engine/generation_events.h"
#include "engine/tokenizer.h"
#include "models/state_arena.h"

namespace slotserve::engine {

class BeamRequest {
 public:
  // `slots`: the request's width slots, slots[0] the one its prompt is prefilled in.
  // `tokenizer` (may be null: no text) and `prompt_ids` must outlive the request.
  BeamRequest(BeamSearchOptions options, std::vector<int> slots, const Tokenizer* tokenizer,
              std::span<const int32_t> prompt_ids);

  // Before the first Advance the prompt is still being prefilled in slots[0].
  bool started() const { return search_.started(); }
  bool done() const { return search_.done(); }
  // The live hypotheses (after the first Advance): each feeds ids.back() in its slot.
  std::span<const BeamSearch::Hypothesis> live() const { return search_.live(); }

  struct StepOutcome {
    std::vector<int> released;  // slots to give back to the pool now (even on an error)
    absl::Status status;        // a copy failed: the request must end
  };
  // One step from `raw_rows` [live().size() rows, vocab] of raw logits (the first step: the
  // prompt's last row): ranks, applies the copy plan to `arena`, and says which slots go.
  StepOutcome Advance(std::span<const float> raw_rows, int vocab, models::StateArena& arena);

  // Every slot the request still holds (any ending gives them back).
  std::vector<int> held_slots() const { return search_.held_slots(); }
  // The n_best finished hypotheses, best first, with their text (as a streamed request's text
  // would read: detokenised after the prompt).
  std::vector<BeamHypothesis> Results() const;

 private:
  BeamSearch search_;
  const Tokenizer* tokenizer_;
  std::span<const int32_t> prompt_ids_;
  std::vector<double> logprob_rows_;  // reused every step
};

}  // namespace slotserve::engine
