#include "server/http/prompt_batch_sink.h"

#include <utility>

namespace slotserve::server::http {

void PromptBatchSink::OnTokens(const engine::TokenChunk& chunk) {
  engine::TokenChunk renumbered = chunk;
  renumbered.choice_index += first_choice_;
  response_->OnTokens(renumbered);
}

void PromptBatchSink::OnFinished(const engine::Finished& finished) {
  engine::Finished renumbered = finished;
  renumbered.choice_index += first_choice_;
  if (finished.request_done) renumbered.request_done = requests_left_->fetch_sub(1) == 1;
  response_->OnFinished(renumbered);
}

}  // namespace slotserve::server::http
