// A GenerationSink that records everything and lets the test wait for the end.
#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "engine/generation_events.h"

namespace slotserve::engine::testing {

class RecordingSink : public GenerationSink {
 public:
  void OnTokens(const TokenChunk& chunk) override {
    std::lock_guard lock(mu_);
    if (finished_) ++calls_after_finish_;
    chunks_.push_back(chunk);
    ids_.insert(ids_.end(), chunk.ids.begin(), chunk.ids.end());
    text_ += chunk.text;
    cv_.notify_all();
  }
  void OnFinished(const Finished& finished) override {
    std::lock_guard lock(mu_);
    if (finished_) ++calls_after_finish_;
    finished_ = finished;
    cv_.notify_all();
  }

  // The Finished event, or nullopt after `timeout`.
  std::optional<Finished> WaitFinished(absl::Duration timeout = absl::Seconds(20)) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, absl::ToChronoNanoseconds(timeout), [&] { return finished_.has_value(); });
    return finished_;
  }
  // Blocks until at least `n` tokens arrived (or `timeout`).
  bool WaitTokens(size_t n, absl::Duration timeout = absl::Seconds(20)) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, absl::ToChronoNanoseconds(timeout), [&] { return ids_.size() >= n; });
  }

  std::vector<int32_t> ids() const {
    std::lock_guard lock(mu_);
    return ids_;
  }
  std::string text() const {
    std::lock_guard lock(mu_);
    return text_;
  }
  std::vector<TokenChunk> chunks() const {
    std::lock_guard lock(mu_);
    return chunks_;
  }
  int calls_after_finish() const {
    std::lock_guard lock(mu_);
    return calls_after_finish_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<TokenChunk> chunks_;
  std::vector<int32_t> ids_;
  std::string text_;
  std::optional<Finished> finished_;
  int calls_after_finish_ = 0;
};

}  // namespace slotserve::engine::testing
