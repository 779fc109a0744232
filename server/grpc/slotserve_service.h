// slotserve.v1.SlotServe on gRPC's callback API. Handlers run on gRPC threads and only parse,
// submit to the scheduler and read its state (docs/ARCHITECTURE.md "Floors").
#pragma once

#include <string>

#include <grpcpp/grpcpp.h>
#include "engine/scheduler.h"
#include "server/api_keys.h"
#include "server/generation_gateway.h"
#include "server/grpc/session_transfer.h"
#include "server/grpc/write_dispatcher.h"
#include "server/server_metrics.h"
#include "slotserve/v1/slotserve.grpc.pb.h"

namespace slotserve::server {

class SlotServeService final : public v1::SlotServe::CallbackService {
 public:
  // `metrics` may be null; scheduler and metrics must outlive the service.
  // `transfer` (export / import of sessions) may be null: those RPCs are then UNIMPLEMENTED.
  // `api_keys` (may be null: every call is let in) must outlive it too; with it every call must
  // carry a current key.
  SlotServeService(engine::Scheduler& scheduler, ServerMetrics* metrics, std::string model_name,
                   const SessionTransfer* transfer = nullptr,
                   const ApiKeyStore* api_keys = nullptr);

  grpc::ServerWriteReactor<v1::GenerateResponse>* Generate(
      grpc::CallbackServerContext* context, const v1::GenerateRequest* request) override;
  grpc::ServerUnaryReactor* Complete(grpc::CallbackServerContext* context,
                                     const v1::GenerateRequest* request,
                                     v1::CompleteResponse* response) override;
  grpc::ServerUnaryReactor* GetModelInfo(grpc::CallbackServerContext* context,
                                         const v1::GetModelInfoRequest* request,
                                         v1::ModelInfo* response) override;
  grpc::ServerUnaryReactor* Tokenize(grpc::CallbackServerContext* context,
                                     const v1::TokenizeRequest* request,
                                     v1::TokenizeResponse* response) override;
  grpc::ServerUnaryReactor* ExportSession(grpc::CallbackServerContext* context,
                                          const v1::ExportSessionRequest* request,
                                          v1::ExportSessionResponse* response) override;
  grpc::ServerUnaryReactor* ImportSession(grpc::CallbackServerContext* context,
                                          const v1::ImportSessionRequest* request,
                                          v1::ImportSessionResponse* response) override;

  // See GenerationGateway::WaitForCallsDone.
  bool WaitForCallsDone(absl::Time deadline) { return gateway_.WaitForCallsDone(deadline); }

 private:
  // AuthenticateCall for this service's keys.
  grpc::Status Authenticate(const grpc::CallbackServerContext& context) const;
  // Finishes a unary call refused by Authenticate.
  static grpc::ServerUnaryReactor* Refuse(grpc::CallbackServerContext* context,
                                          const grpc::Status& status);

  engine::Scheduler& scheduler_;
  ServerMetrics* const metrics_;
  const ApiKeyStore* const api_keys_;
  GenerationGateway gateway_;
  // Starts the Generate streams' writes off the engine thread. Outlives the gRPC server, which
  // is destroyed first (server_lifecycle.cc), so every posted write still runs.
  WriteDispatcher writes_;
  std::string model_name_;
  const SessionTransfer* transfer_;
};

}  // namespace slotserve::server
