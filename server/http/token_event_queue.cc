#include "server/http/token_event_queue.h"

#include <utility>

namespace slotserve::server::http {

void AppendTokens(const engine::TokenChunk& chunk, engine::TokenChunk* merged) {
  merged->ids.insert(merged->ids.end(), chunk.ids.begin(), chunk.ids.end());
  merged->text += chunk.text;
  merged->logprobs.insert(merged->logprobs.end(), chunk.logprobs.begin(), chunk.logprobs.end());
  if (chunk.prompt_logprobs.has_value()) merged->prompt_logprobs = chunk.prompt_logprobs;
}

void TokenEventQueue::OnTokens(const engine::TokenChunk& chunk) {
  absl::MutexLock lock(&mu_);
  ChoiceEvents& choice = pending_[chunk.choice_index];
  choice.index = chunk.choice_index;
  choice.tokens.choice_index = chunk.choice_index;
  AppendTokens(chunk, &choice.tokens);
  has_news_ = true;
}

void TokenEventQueue::OnFinished(const engine::Finished& finished) {
  absl::MutexLock lock(&mu_);
  ChoiceEvents& choice = pending_[finished.choice_index];
  choice.index = finished.choice_index;
  choice.tokens.choice_index = finished.choice_index;
  choice.finished = finished;
  if (finished.request_done) request_done_ = true;
  has_news_ = true;
}

TokenEventQueue::Events TokenEventQueue::Take(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(&has_news_), timeout);
  Events events;
  if (!has_news_) return events;
  for (auto& [index, choice] : pending_) events.choices.push_back(std::move(choice));
  pending_.clear();
  if (request_done_ && !request_done_taken_) {
    events.request_done = true;
    request_done_taken_ = true;
  }
  has_news_ = false;
  return events;
}

bool TokenEventQueue::finished() const {
  absl::MutexLock lock(&mu_);
  return request_done_;
}

}  // namespace slotserve::server::http
