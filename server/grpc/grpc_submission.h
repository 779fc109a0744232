// A gRPC generation call (Generate, Complete) at the front ends' shared gateway: its request
// parsed from the wire and submitted, when it arrived and its deadline, and the client's cancel
// told apart from the client's deadline. The gateway itself takes engine types only.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <grpcpp/server_context.h>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/generation_events.h"
#include "engine/scheduler.h"
#include "server/generation_gateway.h"
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

// gRPC's "no deadline" (time_point::max) becomes absl::InfiniteFuture.
absl::Time DeadlineFromGrpc(std::chrono::system_clock::time_point deadline);

// Parses `request` and submits it through `gateway`; the sink then gets the request's events
// on the engine thread. On error nothing was submitted, the refusal is counted and the sink is
// never called; the engine's refusals name the proto's fields (proto_field_names.h). `request_id`
// receives the client's id, or one made up when the client sent none.
absl::StatusOr<engine::RequestId> SubmitGenerateRequest(
    GenerationGateway& gateway, const v1::GenerateRequest& request,
    std::chrono::system_clock::time_point deadline, std::shared_ptr<engine::GenerationSink> sink,
    std::string* request_id);

// A gRPC client's cancel (or its stream breaking) of request `id`, on a call with `times`.
// One that comes this close to the call's deadline (ClientDeadlineReached) is the client's
// own deadline: left to the engine, which ends the request with DEADLINE_EXCEEDED as soon as
// the server's copy of the deadline passes (the same step, or a few ms later).
void CancelForClient(GenerationGateway& gateway, engine::RequestId id, const CallTimes& times);

}  // namespace slotserve::server
