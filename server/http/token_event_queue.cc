#include "server/http/token_event_queue.h"

#include <utility>

namespace slotserve::server::http {

void AppendTokens(const engine::TokenChunk& chunk, engine::TokenChunk* merged) {
  merged->ids.insert(merged->ids.end(), chunk.ids.begin(), chunk.ids.end());
  merged->text += chunk.text;
  merged->logprobs.insert(merged->logprobs.end(), chunk.logprobs.begin(), chunk.logprobs.end());
}

void TokenEventQueue::OnTokens(const engine::TokenChunk& chunk) {
  absl::MutexLock lock(&mu_);
  AppendTokens(chunk, &pending_);
  has_news_ = true;
}

void TokenEventQueue::OnFinished(const engine::Finished& finished) {
  absl::MutexLock lock(&mu_);
  finished_ = finished;
  has_news_ = true;
}

TokenEventQueue::Events TokenEventQueue::Take(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(&has_news_), timeout);
  Events events;
  if (!has_news_) return events;
  events.tokens = std::move(pending_);
  pending_ = engine::TokenChunk();
  if (finished_.has_value() && !finished_taken_) {
    events.finished = finished_;
    finished_taken_ = true;
  }
  has_news_ = false;
  return events;
}

bool TokenEventQueue::finished() const {
  absl::MutexLock lock(&mu_);
  return finished_.has_value();
}

}  // namespace slotserve::server::http
