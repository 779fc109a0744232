#include "server/grpc/slotserve_service.h"

#include <utility>

#include "server/grpc/call_authentication.h"
#include "server/grpc/complete_call.h"
#include "server/grpc/generate_call.h"
#include "server/grpc/model_info.h"
#include "server/grpc/request_parsing.h"
#include "server/grpc/status_mapping.h"

namespace slotserve::server {

SlotServeService::SlotServeService(engine::Scheduler& scheduler, ServerMetrics* metrics,
                                   std::string model_name, const SessionTransfer* transfer,
                                   const ApiKeyStore* api_keys)
    : scheduler_(scheduler),
      metrics_(metrics),
      api_keys_(api_keys),
      gateway_(scheduler, metrics),
      model_name_(std::move(model_name)),
      transfer_(transfer) {}

grpc::Status SlotServeService::Authenticate(const grpc::CallbackServerContext& context) const {
  return AuthenticateCall(api_keys_, context, metrics_);
}

grpc::ServerUnaryReactor* SlotServeService::Refuse(grpc::CallbackServerContext* context,
                                                   const grpc::Status& status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(status);
  return reactor;
}

grpc::ServerWriteReactor<v1::GenerateResponse>* SlotServeService::Generate(
    grpc::CallbackServerContext* context, const v1::GenerateRequest* request) {
  if (grpc::Status denied = Authenticate(*context); !denied.ok()) {
    return RefusedWriteCall<v1::GenerateResponse>(denied);
  }
  return GenerateCall::Start(gateway_, writes_, context, *request);
}

grpc::ServerUnaryReactor* SlotServeService::Complete(grpc::CallbackServerContext* context,
                                                     const v1::GenerateRequest* request,
                                                     v1::CompleteResponse* response) {
  if (grpc::Status denied = Authenticate(*context); !denied.ok()) return Refuse(context, denied);
  return CompleteCall::Start(gateway_, context, *request, response);
}

grpc::ServerUnaryReactor* SlotServeService::GetModelInfo(grpc::CallbackServerContext* context,
                                                         const v1::GetModelInfoRequest*,
                                                         v1::ModelInfo* response) {
  if (grpc::Status denied = Authenticate(*context); !denied.ok()) return Refuse(context, denied);
  *response = DescribeModel(scheduler_, model_name_);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* SlotServeService::Tokenize(grpc::CallbackServerContext* context,
                                                     const v1::TokenizeRequest* request,
                                                     v1::TokenizeResponse* response) {
  if (grpc::Status denied = Authenticate(*context); !denied.ok()) return Refuse(context, denied);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const int bos_id = request->add_bos() ? scheduler_.model_config().bos_id : -1;
  absl::StatusOr<std::vector<int32_t>> ids =
      EncodeText(request->text(), "text", scheduler_.tokenizer(), bos_id);
  if (!ids.ok()) {
    reactor->Finish(ToGrpcStatus(ids.status()));
    return reactor;
  }
  for (int32_t id : *ids) {
    response->add_ids(id);
    response->add_pieces(std::string(scheduler_.tokenizer()->IdToPiece(id)));
  }
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* SlotServeService::ExportSession(grpc::CallbackServerContext* context,
                                                          const v1::ExportSessionRequest* request,
                                                          v1::ExportSessionResponse* response) {
  if (grpc::Status denied = Authenticate(*context); !denied.ok()) return Refuse(context, denied);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (transfer_ == nullptr) {
    reactor->Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "session export is off"));
    return reactor;
  }
  absl::StatusOr<std::vector<uint8_t>> blob = transfer_->Export(request->handle());
  if (blob.ok()) response->set_state(std::string(blob->begin(), blob->end()));
  reactor->Finish(ToGrpcStatus(blob.status()));
  return reactor;
}

grpc::ServerUnaryReactor* SlotServeService::ImportSession(grpc::CallbackServerContext* context,
                                                          const v1::ImportSessionRequest* request,
                                                          v1::ImportSessionResponse* response) {
  if (grpc::Status denied = Authenticate(*context); !denied.ok()) return Refuse(context, denied);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (transfer_ == nullptr) {
    reactor->Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "session import is off"));
    return reactor;
  }
  absl::StatusOr<std::string> handle = transfer_->Import(request->state());
  if (handle.ok()) response->set_handle(*handle);
  reactor->Finish(ToGrpcStatus(handle.status()));
  return reactor;
}

}  // namespace slotserve::server
