// The OpenAI-compatible HTTP API (the README's "The HTTP API") on --http-listen, beside gRPC and
// sharing its engine: POST /v1/completions and /v1/chat/completions (openai_generation.h), GET
// /v1/models (and /v1/models/{id}), POST /tokenize and /detokenize (tokenize_routes.h), GET /health
// (200 serving, 503 draining) and GET /metrics (the same registry as --metrics-listen). Unknown
// routes and every error answer in OpenAI's error JSON; a known route asked with another method
// answers 405 with Allow, OPTIONS answers every known route, and CORS follows cors_policy.h.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "prometheus/registry.h"
#include "server/api_keys.h"
#include "server/generation_gateway.h"
#include "server/http/chat_template.h"
#include "server/http/cors_policy.h"
#include "server/http/http_listener.h"
#include "server/http/openai_generation.h"

namespace slotserve::server::http {

struct HttpFrontEndOptions {
  std::string address;  // --http-listen
  int threads = 128;    // --http-threads: connections served at once
  // HTTPS with these files when set (must outlive Start).
  const TlsFiles* tls = nullptr;
  // When set (it must outlive the front end), /v1/ routes need a current key.
  const ApiKeyStore* api_keys = nullptr;
  // Cross-origin requests from browsers (--allowed-origins ...); none by default.
  CorsPolicy cors;
};

class HttpFrontEnd {
 public:
  // Serves `model` (whose tokenizer must outlive the front end; its chat_template is replaced
  // by `chat_template`) through `scheduler`; refusals are counted in `metrics` (may be null),
  // whose registry /metrics serves (may be null: no /metrics).
  static absl::StatusOr<std::unique_ptr<HttpFrontEnd>> Start(
      const HttpFrontEndOptions& options, engine::Scheduler& scheduler, ServerMetrics* metrics,
      ServedModel model, ChatTemplate chat_template,
      std::shared_ptr<prometheus::Registry> registry);

  // Stop()s.
  ~HttpFrontEnd();

  // /health answers 503 from now on; new generations are refused by the scheduler (503).
  void BeginDrain() { draining_ = true; }
  // Blocks until every generation's response is written or `deadline` passes.
  bool WaitForCallsDone(absl::Time deadline) { return gateway_.WaitForCallsDone(deadline); }
  // Stops listening and joins the connection threads (HttpListener::Stop).
  void Stop();

  int port() const { return listener_->port(); }

 private:
  HttpFrontEnd(engine::Scheduler& scheduler, ServerMetrics* metrics, ServedModel model,
               ChatTemplate chat_template, const ApiKeyStore* api_keys, CorsPolicy cors);
  void AddRoutes(httplib::Server& server, std::shared_ptr<prometheus::Registry> registry);
  static ServedModel WithTemplate(ServedModel model, const ChatTemplate* chat_template);

  ServerMetrics* const metrics_;
  const ApiKeyStore* const api_keys_;
  const CorsPolicy cors_;
  GenerationGateway gateway_;
  const ChatTemplate chat_template_;
  const ServedModel model_;
  GenerationHandler generations_;
  const int64_t created_;  // start-up time: /v1/models' "created"
  std::atomic<bool> draining_{false};
  std::unique_ptr<HttpListener> listener_;
};

}  // namespace slotserve::server::http
