// One Generate call (server streaming, gRPC callback API). The engine thread pushes token
// chunks into the call's queue and posts the call to the WriteDispatcher, whose thread starts
// the write (write_dispatcher.h: a write is not free, and the batch waits for the engine
// thread); the reactor writes them one message at a time. Chunks that
// arrive while a write is in flight are merged into the next message of their choice, so a slow
// client costs one pending message per choice, never a growing queue, and the engine never
// waits for the network.
// Cancellation or disconnect cancels the engine request, which returns its slot at the next
// step; the call finishes only after the engine's Finished, so the engine never outlives the
// reactor's interest in it.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <grpcpp/grpcpp.h>
#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "engine/generation_events.h"
#include "engine/generation_request.h"
#include "server/generation_gateway.h"
#include "server/grpc/grpc_submission.h"
#include "server/grpc/write_dispatcher.h"
#include "slotserve/v1/slotserve.pb.h"

namespace slotserve::server {

class GenerateCall final : public grpc::ServerWriteReactor<v1::GenerateResponse>,
                           public engine::GenerationSink,
                           public std::enable_shared_from_this<GenerateCall> {
 public:
  // Submits the request and returns the reactor gRPC drives (it lives until OnDone and while
  // the engine still holds the sink). A refused request finishes at once with the mapped
  // status.
  // `writes` starts the writes of the engine's events; it and the gateway must outlive the call.
  static grpc::ServerWriteReactor<v1::GenerateResponse>* Start(GenerationGateway& gateway,
                                                               WriteDispatcher& writes,
                                                               grpc::CallbackServerContext* context,
                                                               const v1::GenerateRequest& request);

  GenerateCall(GenerationGateway& gateway, WriteDispatcher& writes, CallTimes times)
      : gateway_(gateway), writes_(writes), times_(times) {}

  // engine::GenerationSink (engine thread).
  void OnTokens(const engine::TokenChunk& chunk) override;
  void OnFinished(const engine::Finished& finished) override;

  // grpc::ServerWriteReactor (gRPC threads).
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  enum class Action { kNone, kWrite, kFinish };

  // Picks the next thing to send and marks it started; the caller performs it after unlocking
  // (gRPC may run reactions inline, which must not find the mutex held).
  Action NextActionLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Perform(Action action);
  void CancelInEngine();
  // Engine thread, mu_ held: has the dispatcher start the next write unless one is in flight
  // (its OnWriteDone picks the new tokens up) or already posted. True when the caller must
  // post Flush.
  bool NeedsFlushLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PostFlush();
  // Dispatcher thread: starts whatever is due.
  void Flush();

  GenerationGateway& gateway_;
  WriteDispatcher& writes_;
  std::shared_ptr<GenerateCall> self_;  // gRPC's reference, dropped in OnDone
  std::string request_id_;
  const CallTimes times_;  // a cancel at the deadline is the deadline (CancelForClient)

  absl::Mutex mu_;
  std::optional<engine::RequestId> id_ ABSL_GUARDED_BY(mu_);
  bool client_gone_ ABSL_GUARDED_BY(mu_) = false;  // cancelled, disconnected or a write failed
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool flush_posted_ ABSL_GUARDED_BY(mu_) = false;
  bool finish_called_ ABSL_GUARDED_BY(mu_) = false;
  bool engine_done_ ABSL_GUARDED_BY(mu_) = false;
  // Tokens not written yet, one message per choice (n > 1: GenerateRequest.n), so a slow
  // client costs at most n pending messages.
  std::map<int32_t, v1::GenerateResponse> pending_tokens_ ABSL_GUARDED_BY(mu_);
  // Each choice's finished message, written once no tokens are pending (a choice's tokens
  // all arrive before its Finished, so they go out before it).
  std::deque<v1::GenerateResponse> finished_messages_ ABSL_GUARDED_BY(mu_);
  grpc::Status final_status_ ABSL_GUARDED_BY(mu_);  // the first choice's error, else OK
  // Owned by the write in flight; only touched when no write is in flight.
  v1::GenerateResponse in_flight_;
};

}  // namespace slotserve::server
