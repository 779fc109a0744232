// Hands one request's engine events to the HTTP thread that answers it. The engine thread
// only appends under a mutex and notifies (GenerationSink must never block); token chunks
// that arrive while the HTTP thread is busy writing are merged, so a slow client costs one
// growing chunk, never a queue of them, and its next write carries everything new at once.
#pragma once

#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "engine/generation_events.h"

namespace slotserve::server::http {

// Appends `chunk`'s ids, text and logprobs to *merged, keeping their order.
void AppendTokens(const engine::TokenChunk& chunk, engine::TokenChunk* merged);

class TokenEventQueue final : public engine::GenerationSink {
 public:
  struct Events {
    engine::TokenChunk tokens;                 // every chunk since the last Take, merged
    std::optional<engine::Finished> finished;  // set once, by the Take that sees the end
    bool empty() const {
      return tokens.ids.empty() && tokens.text.empty() && tokens.logprobs.empty() &&
             !finished.has_value();
    }
  };

  // engine::GenerationSink (engine thread).
  void OnTokens(const engine::TokenChunk& chunk) override;
  void OnFinished(const engine::Finished& finished) override;

  // What arrived since the last call; when nothing has, waits for it up to `timeout`.
  Events Take(absl::Duration timeout);
  // Whether the engine has reported the end (taken or not).
  bool finished() const;

 private:
  mutable absl::Mutex mu_;
  engine::TokenChunk pending_ ABSL_GUARDED_BY(mu_);
  std::optional<engine::Finished> finished_ ABSL_GUARDED_BY(mu_);
  bool finished_taken_ ABSL_GUARDED_BY(mu_) = false;
  bool has_news_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace slotserve::server::http
