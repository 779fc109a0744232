#include "server/grpc/complete_call.h"

#include "absl/strings/str_cat.h"

#include <utility>

#include "server/grpc/response_building.h"
#include "server/grpc/status_mapping.h"

namespace slotserve::server {

grpc::ServerUnaryReactor* CompleteCall::Start(GenerationGateway& gateway,
                                              grpc::CallbackServerContext* context,
                                              const v1::GenerateRequest& request,
                                              v1::CompleteResponse* response) {
  auto call = std::make_shared<CompleteCall>(gateway, response, CallTimesOf(*context));
  call->self_ = call;
  gateway.CallStarted();
  absl::StatusOr<engine::RequestId> id =
      request.n() > 1
          ? absl::InvalidArgumentError(absl::StrCat(
                "n must be 1 for Complete (one text); use Generate for n > 1, got ", request.n()))
          : SubmitGenerateRequest(gateway, request, context->deadline(), call, &call->request_id_);
  if (!id.ok()) {
    call->Finish(ToGrpcStatus(id.status()));
    return call.get();
  }
  bool cancel_now;
  {
    absl::MutexLock lock(&call->mu_);
    call->id_ = *id;
    cancel_now = call->cancelled_ && !call->engine_done_;
  }
  if (cancel_now) CancelForClient(gateway, *id, call->times_);
  return call.get();
}

void CompleteCall::OnTokens(const engine::TokenChunk& chunk) {
  absl::MutexLock lock(&mu_);
  response_->mutable_token_ids()->Add(chunk.ids.begin(), chunk.ids.end());
  response_->mutable_text()->append(chunk.text);
  AppendLogprobs(chunk.logprobs, response_->mutable_logprobs());
  if (chunk.prompt_logprobs.has_value()) {
    AppendLogprobs(*chunk.prompt_logprobs, response_->mutable_prompt_logprobs());
  }
}

void CompleteCall::OnFinished(const engine::Finished& finished) {
  {
    absl::MutexLock lock(&mu_);
    FillFinished(finished, request_id_, response_->mutable_finished());
    engine_done_ = true;
  }
  Finish(ToGrpcStatus(finished.status));
}

void CompleteCall::OnCancel() {
  std::optional<engine::RequestId> id;
  {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
    if (!engine_done_) id = id_;  // unset while Start is still submitting; Start cancels then
  }
  if (id.has_value()) CancelForClient(gateway_, *id, times_);
}

void CompleteCall::OnDone() {
  // The engine may still hold a reference until its OnFinished returns.
  gateway_.CallDone();
  std::shared_ptr<CompleteCall> release = std::move(self_);
}

}  // namespace slotserve::server
