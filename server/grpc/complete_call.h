// One Complete call (unary): the same generation as Generate, collected into one response
// that is sent when the engine reports the request finished.
#pragma once

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
#include "slotserve/v1/slotserve.pb.h"

namespace slotserve::server {

class CompleteCall final : public grpc::ServerUnaryReactor, public engine::GenerationSink {
 public:
  // `response` is gRPC's and stays valid until OnDone.
  static grpc::ServerUnaryReactor* Start(GenerationGateway& gateway,
                                         grpc::CallbackServerContext* context,
                                         const v1::GenerateRequest& request,
                                         v1::CompleteResponse* response);

  CompleteCall(GenerationGateway& gateway, v1::CompleteResponse* response, CallTimes times)
      : gateway_(gateway), times_(times), response_(response) {}

  // engine::GenerationSink (engine thread).
  void OnTokens(const engine::TokenChunk& chunk) override;
  void OnFinished(const engine::Finished& finished) override;

  // grpc::ServerUnaryReactor (gRPC threads).
  void OnCancel() override;
  void OnDone() override;

 private:
  GenerationGateway& gateway_;
  std::shared_ptr<CompleteCall> self_;  // gRPC's reference, dropped in OnDone
  std::string request_id_;
  const CallTimes times_;  // a cancel at the deadline is the deadline (CancelForClient)

  absl::Mutex mu_;
  v1::CompleteResponse* const response_ ABSL_PT_GUARDED_BY(mu_);
  std::optional<engine::RequestId> id_ ABSL_GUARDED_BY(mu_);
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool engine_done_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace slotserve::server
