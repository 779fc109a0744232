// Hands one request's engine events to the HTTP thread that answers it. The engine thread
// only appends under a mutex and notifies (GenerationSink must never block); token chunks
// that arrive while the HTTP thread is busy writing are merged per choice, so a slow client
// costs one growing chunk per choice, never a queue of them, and its next write carries
// everything new at once.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "engine/generation_events.h"

namespace slotserve::server::http {

// Appends `chunk`'s ids, text and logprobs to *merged, keeping their order.
void AppendTokens(const engine::TokenChunk& chunk, engine::TokenChunk* merged);

class TokenEventQueue final : public engine::GenerationSink {
 public:
  // What one choice (GenerationRequest::n) produced since the last Take.
  struct ChoiceEvents {
    int32_t index = 0;
    engine::TokenChunk tokens;                 // every chunk since the last Take, merged
    std::optional<engine::Finished> finished;  // set once, by the Take that sees its end
  };
  struct Events {
    std::vector<ChoiceEvents> choices;  // by index; only choices with news
    bool request_done = false;          // the request's last Finished is among them
    bool empty() const { return choices.empty(); }
  };

  // engine::GenerationSink (engine thread).
  void OnTokens(const engine::TokenChunk& chunk) override;
  void OnFinished(const engine::Finished& finished) override;

  // What arrived since the last call; when nothing has, waits for it up to `timeout`.
  Events Take(absl::Duration timeout);
  // Whether the engine has reported the request's end (taken or not).
  bool finished() const;

 private:
  mutable absl::Mutex mu_;
  std::map<int32_t, ChoiceEvents> pending_ ABSL_GUARDED_BY(mu_);
  bool request_done_ ABSL_GUARDED_BY(mu_) = false;
  bool request_done_taken_ ABSL_GUARDED_BY(mu_) = false;
  bool has_news_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace slotserve::server::http
