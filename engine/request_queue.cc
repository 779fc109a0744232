#include "engine/request_queue.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "engine/ending_status.h"

namespace slotserve::engine {
namespace {

int SlotsOf(const ActiveRequest& request) {
  return static_cast<int>(SlotsNeeded(request.request()));
}

}  // namespace

RequestQueue::RequestQueue(int max_queued, int slots_total)
    : max_queued_(max_queued), slots_total_(slots_total) {}

absl::StatusOr<std::vector<RequestId>> RequestQueue::EnqueueAll(
    int count, absl::FunctionRef<std::unique_ptr<ActiveRequest>(int, RequestId)> make) {
  std::lock_guard lock(mu_);
  if (shut_down_) return absl::UnavailableError("the scheduler has stopped");
  if (draining_) return absl::UnavailableError("the server is draining; not accepting requests");
  const int waiting = static_cast<int>(queue_.size());
  if (waiting + count > max_queued_) {
    return absl::ResourceExhaustedError(
        count == 1
            ? absl::StrCat("the request queue is full (", max_queued_,
                           " waiting for a state slot); retry later")
            : absl::StrCat("the request queue cannot take these ", count, " requests together (",
                           waiting, " of ", max_queued_, " places taken); retry later"));
  }
  std::vector<RequestId> ids;
  for (int i = 0; i < count; ++i) {
    const RequestId id = next_id_++;
    queue_.push_back(make(i, id));
    const int slots = SlotsOf(*queue_.back());
    live_.emplace(id, slots);
    live_slots_ += slots;
    queued_slots_ += slots;
    ids.push_back(id);
  }
  work_cv_.notify_one();
  return ids;
}

bool RequestQueue::Cancel(RequestId id) {
  std::lock_guard lock(mu_);
  if (!live_.contains(id)) return false;
  cancels_.push_back(id);
  work_cv_.notify_one();
  return true;
}

void RequestQueue::BeginDrain() {
  std::lock_guard lock(mu_);
  draining_ = true;
}

bool RequestQueue::draining() const {
  std::lock_guard lock(mu_);
  return draining_ || shut_down_;
}

bool RequestQueue::WaitIdle(absl::Time deadline) {
  std::unique_lock lock(mu_);
  while (!live_.empty()) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return false;
    idle_cv_.wait_for(lock, absl::ToChronoNanoseconds(std::min(left, absl::Seconds(1))));
  }
  return true;
}

bool RequestQueue::ShutDown() {
  std::lock_guard lock(mu_);
  if (shut_down_) return false;
  shut_down_ = true;
  work_cv_.notify_one();
  return true;
}

bool RequestQueue::shut_down() const {
  std::lock_guard lock(mu_);
  return shut_down_;
}

SchedulerStats RequestQueue::stats() const {
  std::lock_guard lock(mu_);
  return StatsLocked();
}

SchedulerStats RequestQueue::StatsLocked() const {
  SchedulerStats stats;
  stats.queued = static_cast<int>(queue_.size());
  stats.running = static_cast<int>(live_.size()) - stats.queued;
  stats.slots_used = live_slots_ - queued_slots_;
  stats.slots_total = slots_total_;
  return stats;
}

std::optional<RequestQueue::Intake> RequestQueue::WaitForWork(bool running, int free_slots) {
  std::unique_lock lock(mu_);
  work_cv_.wait(lock, [&] {
    return shut_down_ || !cancels_.empty() || running || (!queue_.empty() && free_slots > 0);
  });
  if (shut_down_) return std::nullopt;
  Intake intake;
  intake.cancelled.insert(cancels_.begin(), cancels_.end());
  cancels_.clear();
  const absl::Time now = absl::Now();
  for (auto it = queue_.begin(); it != queue_.end();) {
    // As for a running request (Scheduler): a passed deadline wins over a cancel.
    if ((*it)->request().deadline <= now) {
      intake.dropped.emplace_back(std::move(*it), DeadlineStatus(**it, now));
    } else if (intake.cancelled.contains((*it)->id())) {
      intake.dropped.emplace_back(std::move(*it), CancelledStatus());
    } else {
      ++it;
      continue;
    }
    queued_slots_ -= SlotsOf(*intake.dropped.back().first);
    it = queue_.erase(it);
  }
  const size_t head = std::min(queue_.size(), static_cast<size_t>(std::max(free_slots, 0)));
  for (size_t i = 0; i < head; ++i) intake.head.push_back({.slots_needed = SlotsOf(*queue_[i])});
  return intake;
}

std::vector<std::unique_ptr<ActiveRequest>> RequestQueue::PopFront(int count) {
  std::vector<std::unique_ptr<ActiveRequest>> front;
  std::lock_guard lock(mu_);
  while (!queue_.empty() && static_cast<int>(front.size()) < count) {
    queued_slots_ -= SlotsOf(*queue_.front());
    front.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  return front;
}

std::deque<std::unique_ptr<ActiveRequest>> RequestQueue::TakeAll() {
  std::deque<std::unique_ptr<ActiveRequest>> queued;
  std::lock_guard lock(mu_);
  queued.swap(queue_);
  queued_slots_ = 0;
  return queued;
}

SchedulerStats RequestQueue::Retire(RequestId id) {
  std::lock_guard lock(mu_);
  if (auto it = live_.find(id); it != live_.end()) {
    live_slots_ -= it->second;
    live_.erase(it);
  }
  return StatsLocked();
}

SchedulerStats RequestQueue::SlotReturned(RequestId id) {
  std::lock_guard lock(mu_);
  if (auto it = live_.find(id); it != live_.end() && it->second > 0) {
    --it->second;
    --live_slots_;
  }
  return StatsLocked();
}

void RequestQueue::NotifyIfIdle() {
  std::lock_guard lock(mu_);
  if (live_.empty()) idle_cv_.notify_all();
}

}  // namespace slotserve::engine
