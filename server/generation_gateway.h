// What a generation call needs from the server, whichever front end it came through (gRPC
// Generate/Complete, HTTP completions): the request submitted to the scheduler, cancellation,
// refusals counted in the metrics, and the calls in flight counted for shutdown. It takes
// engine types only: each front end parses its own wire form (server/grpc/grpc_submission.h,
// server/http/openai_request.h).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "engine/generation_events.h"
#include "engine/scheduler.h"
#include "server/server_metrics.h"

namespace slotserve::server {

class GenerationGateway {
 public:
  // `metrics` may be null. Both must outlive the gateway.
  GenerationGateway(engine::Scheduler& scheduler, ServerMetrics* metrics);

  // Submits a request the front end parsed, with `request.request_id` made up when empty
  // (returned in *request_id); the sink then gets the request's events on the engine thread. On
  // error nothing was submitted, the refusal is counted and the sink is never called.
  absl::StatusOr<engine::RequestId> SubmitParsed(engine::GenerationRequest request,
                                                 std::shared_ptr<engine::GenerationSink> sink,
                                                 std::string* request_id);
  // Submits requests already parsed, each with its request_id set, as one: all are queued or
  // none (engine::Scheduler::SubmitAll, which checks each before it asks the queue). A refusal
  // is counted once; `refused` (may be null) receives the index of the request refused, or
  // submissions.size() when the queue refused them all.
  absl::StatusOr<std::vector<engine::RequestId>> SubmitParsedAll(
      std::vector<engine::Submission> submissions, size_t* refused = nullptr);
  // A request the front end refused before it reached the scheduler (it could not be parsed):
  // counted in requests_total{outcome=<code>} like the scheduler's own refusals.
  void CountRefusal(const absl::Status& status);

  void Cancel(engine::RequestId id) { scheduler_.Cancel(id); }

  engine::Scheduler& scheduler() { return scheduler_; }

  // Calls not yet over: a gRPC Generate/Complete until gRPC releases its reactor (OnDone), an
  // HTTP generation until its response is written. A call counts from CallStarted to CallDone.
  void CallStarted();
  void CallDone();
  // Blocks until no call is left or `deadline` passes; true when none is left. Used at
  // shutdown, so that the servers are stopped only once every stream delivered its last
  // message.
  bool WaitForCallsDone(absl::Time deadline);

 private:
  engine::Scheduler& scheduler_;
  ServerMetrics* metrics_;
  std::atomic<uint64_t> next_request_number_{1};
  absl::Mutex calls_mu_;
  int calls_in_flight_ ABSL_GUARDED_BY(calls_mu_) = 0;
};

}  // namespace slotserve::server
