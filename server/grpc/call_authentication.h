// The API-key check of slotserve.v1 calls (--api-keys-file), made at the start of every
// SlotServe handler. A helper rather than a gRPC server interceptor: gRPC 1.51's experimental
// server interceptors cannot end a call with a status of their own before the handler runs,
// and they would see the health and reflection services too, which must stay open.
#pragma once

#include <grpcpp/grpcpp.h>
#include "server/api_keys.h"
#include "server/server_metrics.h"

namespace slotserve::server {

// OK when `keys` is null (no keys asked for) or the call's `authorization` metadata is
// "Bearer <a current key>"; else UNAUTHENTICATED, counted in `metrics` (may be null).
grpc::Status AuthenticateCall(const ApiKeyStore* keys, const grpc::CallbackServerContext& context,
                              ServerMetrics* metrics);

// A Generate call refused before it started: finishes at once with `status`.
template <typename Response>
grpc::ServerWriteReactor<Response>* RefusedWriteCall(const grpc::Status& status) {
  class Refused final : public grpc::ServerWriteReactor<Response> {
   public:
    explicit Refused(const grpc::Status& status) { this->Finish(status); }
    void OnDone() override { delete this; }
  };
  return new Refused(status);
}

}  // namespace slotserve::server
