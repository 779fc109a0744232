// Serves POST /v1/completions and /v1/chat/completions: the body is parsed
// (openai_request.h) and submitted through the gateway the gRPC service also uses (one
// engine), then answered whole once the engine reports the end, or streamed as server-sent
// events ("data: {chunk}\n\n" ..., "data: [DONE]\n\n") while it generates.
//
// A streaming client that goes away cancels its request, so its slot is freed at the next
// engine step: a failed write notices it while tokens flow, and while none do (queued,
// prefilling) the connection is checked every kIdleCheck. A client of a request that is not
// streamed is not watched: cpp-httplib 0.11 gives a handler no view of its connection, so
// such a request runs to its end (bounded by max_tokens) after its client left.
#pragma once

#include <string>

#include <httplib.h>
#include "absl/time/time.h"
#include "server/generation_gateway.h"
#include "server/http/parsed_openai_request.h"
#include "server/http/served_model.h"

namespace slotserve::server::http {

class GenerationHandler {
 public:
  // How often a stream that has nothing to send checks that its client is still there.
  static constexpr absl::Duration kIdleCheck = absl::Milliseconds(200);

  // `gateway` must outlive every response this handler produced (streams run after Handle
  // returns); `model` is what requests are parsed against.
  GenerationHandler(GenerationGateway& gateway, ServedModel model);

  void Handle(Endpoint endpoint, const httplib::Request& request, httplib::Response& response);

 private:
  GenerationGateway& gateway_;
  const ServedModel model_;
};

// Writes `body` as the response's JSON (text that is not UTF-8 replaced, never throwing).
void SendJson(const nlohmann::ordered_json& body, httplib::Response& response);

// Writes `error` as the response: its HTTP status and OpenAI's error body.
void SendError(const absl::Status& error, httplib::Response& response,
               const ParamNames& names = {});

}  // namespace slotserve::server::http
