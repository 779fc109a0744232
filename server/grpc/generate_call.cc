#include "server/grpc/generate_call.h"

#include <utility>

#include "server/grpc/response_building.h"
#include "server/grpc/status_mapping.h"

namespace slotserve::server {

grpc::ServerWriteReactor<v1::GenerateResponse>* GenerateCall::Start(
    GenerationGateway& gateway, WriteDispatcher& writes, grpc::CallbackServerContext* context,
    const v1::GenerateRequest& request) {
  auto call = std::make_shared<GenerateCall>(gateway, writes, CallTimesOf(*context));
  call->self_ = call;
  gateway.CallStarted();
  absl::StatusOr<engine::RequestId> id =
      SubmitGenerateRequest(gateway, request, context->deadline(), call, &call->request_id_);
  Action action;
  bool cancel_now = false;
  {
    absl::MutexLock lock(&call->mu_);
    if (id.ok()) {
      call->id_ = *id;
      cancel_now = call->client_gone_;
    } else {
      call->engine_done_ = true;
      call->final_status_ = ToGrpcStatus(id.status());
    }
    action = call->NextActionLocked();
  }
  if (cancel_now) CancelForClient(gateway, *id, call->times_);
  call->Perform(action);
  return call.get();
}

void GenerateCall::OnTokens(const engine::TokenChunk& chunk) {
  bool flush;
  {
    absl::MutexLock lock(&mu_);
    if (client_gone_) return;
    AppendChunk(chunk, pending_tokens_[chunk.choice_index].mutable_tokens());
    flush = NeedsFlushLocked();
  }
  if (flush) PostFlush();
}

void GenerateCall::OnFinished(const engine::Finished& finished) {
  bool flush;
  {
    absl::MutexLock lock(&mu_);
    FillFinished(finished, request_id_, finished_messages_.emplace_back().mutable_finished());
    if (final_status_.ok()) final_status_ = ToGrpcStatus(finished.status);
    engine_done_ = finished.request_done;
    flush = NeedsFlushLocked();
  }
  if (flush) PostFlush();
}

bool GenerateCall::NeedsFlushLocked() {
  if (writing_ || flush_posted_ || finish_called_) return false;
  flush_posted_ = true;
  return true;
}

void GenerateCall::PostFlush() {
  // The task keeps the call alive: gRPC may drop its reference (OnDone) before it runs.
  writes_.Post([call = shared_from_this()] { call->Flush(); });
}

void GenerateCall::Flush() {
  Action action;
  {
    absl::MutexLock lock(&mu_);
    flush_posted_ = false;
    action = NextActionLocked();
  }
  Perform(action);
}

void GenerateCall::OnWriteDone(bool ok) {
  Action action;
  bool cancel = false;
  {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    if (!ok && !client_gone_) {
      // The stream broke (the client went away): stop generating for it.
      client_gone_ = true;
      cancel = !engine_done_;
    }
    action = NextActionLocked();
  }
  if (cancel) CancelInEngine();
  Perform(action);
}

void GenerateCall::OnCancel() {
  Action action;
  bool cancel;
  {
    absl::MutexLock lock(&mu_);
    client_gone_ = true;
    cancel = !engine_done_;
    action = NextActionLocked();
  }
  if (cancel) CancelInEngine();
  Perform(action);
}

void GenerateCall::OnDone() {
  // The engine may still hold a reference until its OnFinished returns.
  gateway_.CallDone();
  std::shared_ptr<GenerateCall> release = std::move(self_);
}

void GenerateCall::CancelInEngine() {
  std::optional<engine::RequestId> id;
  {
    absl::MutexLock lock(&mu_);
    id = id_;  // unset while Start is still submitting; Start cancels then
  }
  if (id.has_value()) CancelForClient(gateway_, *id, times_);
}

GenerateCall::Action GenerateCall::NextActionLocked() {
  if (writing_ || finish_called_) return Action::kNone;
  if (!client_gone_ && !pending_tokens_.empty()) {
    in_flight_ = std::move(pending_tokens_.begin()->second);
    pending_tokens_.erase(pending_tokens_.begin());
    writing_ = true;
    return Action::kWrite;
  }
  if (!client_gone_ && !finished_messages_.empty()) {
    in_flight_ = std::move(finished_messages_.front());
    finished_messages_.pop_front();
    writing_ = true;
    return Action::kWrite;
  }
  if (!engine_done_) return Action::kNone;
  finish_called_ = true;
  return Action::kFinish;
}

void GenerateCall::Perform(Action action) {
  switch (action) {
    case Action::kNone:
      return;
    case Action::kWrite:
      StartWrite(&in_flight_);
      return;
    case Action::kFinish: {
      grpc::Status status;
      {
        absl::MutexLock lock(&mu_);
        status = final_status_;
      }
      Finish(status);
      return;
    }
  }
}

}  // namespace slotserve::server
