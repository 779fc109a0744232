// What a generation call needs from the server, whichever front end it came through (gRPC
// Generate/Complete, HTTP completions): the request submitted to the scheduler, cancellation,
// refusals counted in the metrics, and the calls in flight counted for shutdown.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <grpcpp/server_context.h>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "engine/generation_events.h"
#include "engine/scheduler.h"
#include "server/server_metrics.h"
#include "slotserve/v1/slotserve.pb.h"

namespace slotserve::server {

// When a gRPC call arrived and its deadline (time_point::max() for none).
struct CallTimes {
  std::chrono::system_clock::time_point started;
  std::chrono::system_clock::time_point deadline;
};
CallTimes CallTimesOf(const grpc::CallbackServerContext& context);

// Whether a cancel arriving `now` on a call with `times` is the client's deadline. The client
// enforces its deadline itself and cancels; the server's copy trails it, because gRPC sends the
// timeout rounded up to about three digits (up to 1% late) and the server counts it from the
// request's arrival. A cancel within 1% of the timeout plus 5 ms of the server's deadline is
// taken for the deadline.
bool ClientDeadlineReached(const CallTimes& times, std::chrono::system_clock::time_point now);

class GenerationGateway {
 public:
  // `metrics` may be null. Both must outlive the gateway.
  GenerationGateway(engine::Scheduler& scheduler, ServerMetrics* metrics);

  // Parses `request` and submits it; the sink then gets the request's events on the engine
  // thread. On error nothing was submitted and the sink is never called. `request_id` receives
  // the client's id, or one made up when the client sent none.
  absl::StatusOr<engine::RequestId> Submit(const v1::GenerateRequest& request,
                                           std::chrono::system_clock::time_point deadline,
                                           std::shared_ptr<engine::GenerationSink> sink,
                                           std::string* request_id);
  // The same for a request already parsed: submits it with `request.request_id` made up when
  // empty (returned in *request_id).
  absl::StatusOr<engine::RequestId> SubmitParsed(engine::GenerationRequest request,
                                                 std::shared_ptr<engine::GenerationSink> sink,
                                                 std::string* request_id);
  // The scheduler's checks of a parsed request without submitting it (a refusal is counted as
  // Submit's are): a batch of prompts checks them all before it submits any.
  absl::Status CheckParsed(const engine::GenerationRequest& request);
  // Submits requests already parsed, each with its request_id set, as one: all are queued or
  // none (engine::Scheduler::SubmitAll). A refusal is counted once.
  absl::StatusOr<std::vector<engine::RequestId>> SubmitParsedAll(
      std::vector<engine::Submission> submissions);
  // A request the front end refused before it reached the scheduler (it could not be parsed):
  // counted in requests_total{outcome=<code>} like the scheduler's own refusals.
  void CountRefusal(const absl::Status& status);

  void Cancel(engine::RequestId id) { scheduler_.Cancel(id); }
  // A gRPC client's cancel (or its stream breaking) of request `id`, on a call with `times`.
  // One that comes this close to the call's deadline (ClientDeadlineReached) is the client's
  // own deadline: left to the engine, which ends the request with DEADLINE_EXCEEDED as soon as
  // the server's copy of the deadline passes (the same step, or a few ms later).
  void CancelForClient(engine::RequestId id, const CallTimes& times);

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

// gRPC's "no deadline" (time_point::max) becomes absl::InfiniteFuture.
absl::Time DeadlineFromGrpc(std::chrono::system_clock::time_point deadline);

}  // namespace slotserve::server
