#include "server/http/http_front_end.h"

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "server/http/known_routes.h"
#include "server/http/metrics_route.h"
#include "server/http/model_object.h"
#include "server/http/openai_errors.h"
#include "server/http/request_authentication.h"
#include "server/http/tokenize_routes.h"

namespace slotserve::server::http {
namespace {

// Prompts are at most --max-prompt-tokens; their JSON is far below this.
constexpr size_t kMaxBodyBytes = 16 << 20;

// The body of errors cpp-httplib produced itself (no route, a body over the limit, a request
// it could not parse), which it sends empty.
absl::Status LibraryError(const httplib::Request& request, int http_status) {
  switch (http_status) {
    case 404:
      return absl::NotFoundError(absl::StrCat("no route ", request.method, " ", request.path,
                                              "; this server answers ", RouteList()));
    case 413:
      return absl::InvalidArgumentError(
          absl::StrCat("the request body is larger than ", kMaxBodyBytes, " bytes"));
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("the HTTP request could not be served (status ", http_status, ")"));
  }
}

}  // namespace

ServedModel HttpFrontEnd::WithTemplate(ServedModel model, const ChatTemplate* chat_template) {
  model.chat_template = chat_template;
  return model;
}

HttpFrontEnd::HttpFrontEnd(engine::Scheduler& scheduler, ServerMetrics* metrics, ServedModel model,
                           ChatTemplate chat_template, const ApiKeyStore* api_keys, CorsPolicy cors)
    : metrics_(metrics),
      api_keys_(api_keys),
      cors_(std::move(cors)),
      gateway_(scheduler, metrics),
      chat_template_(std::move(chat_template)),
      model_(WithTemplate(std::move(model), &chat_template_)),
      generations_(gateway_, model_),
      created_(absl::ToUnixSeconds(absl::Now())) {}

absl::StatusOr<std::unique_ptr<HttpFrontEnd>> HttpFrontEnd::Start(
    const HttpFrontEndOptions& options, engine::Scheduler& scheduler, ServerMetrics* metrics,
    ServedModel model, ChatTemplate chat_template, std::shared_ptr<prometheus::Registry> registry) {
  std::unique_ptr<HttpFrontEnd> front_end(new HttpFrontEnd(scheduler, metrics, std::move(model),
                                                           std::move(chat_template),
                                                           options.api_keys, options.cors));
  absl::StatusOr<std::unique_ptr<HttpListener>> listener = HttpListener::Start(
      options.address, ListenerOptions{"--http-listen", options.threads, options.tls},
      [&](httplib::Server& server) { front_end->AddRoutes(server, std::move(registry)); });
  if (!listener.ok()) return listener.status();
  front_end->listener_ = *std::move(listener);
  return front_end;
}

HttpFrontEnd::~HttpFrontEnd() { Stop(); }

void HttpFrontEnd::Stop() {
  if (listener_ != nullptr) listener_->Stop();
}

void HttpFrontEnd::AddRoutes(httplib::Server& server,
                             std::shared_ptr<prometheus::Registry> registry) {
  server.set_payload_max_length(kMaxBodyBytes);
  // Before any route: CORS headers on every answer to an allowed origin, and OPTIONS (a CORS
  // preflight or a plain one) answered for each known route. OPTIONS carries no body, so
  // answering here leaves nothing unread on the connection (see request_authentication.h).
  server.set_pre_routing_handler(
      [this](const httplib::Request& request, httplib::Response& response) {
        const bool cross_origin = AddCorsHeaders(cors_, request, response);
        const std::vector<std::string> methods = MethodsOf(request.path);
        if (request.method != "OPTIONS" || methods.empty()) {
          return httplib::Server::HandlerResponse::Unhandled;
        }
        response.status = 204;
        response.set_header("Allow", absl::StrJoin(methods, ", "));
        if (cross_origin && request.has_header("Access-Control-Request-Method")) {
          AddPreflightHeaders(cors_, methods, request, response);
        }
        return httplib::Server::HandlerResponse::Handled;
      });
  // Every /v1/ route and the tokenizer's need a key when --api-keys-file is given; /health and
  // /metrics do not.
  const auto v1 = [this](httplib::Server::Handler handler) {
    return Authenticated(api_keys_, metrics_, std::move(handler));
  };
  server.Post("/v1/completions",
              v1([this](const httplib::Request& request, httplib::Response& response) {
                generations_.Handle(Endpoint::kCompletions, request, response);
              }));
  server.Post("/v1/chat/completions",
              v1([this](const httplib::Request& request, httplib::Response& response) {
                generations_.Handle(Endpoint::kChat, request, response);
              }));
  const nlohmann::ordered_json model_object = ModelObject(model_, created_);
  server.Get("/v1/models", v1([model_object](const httplib::Request&, httplib::Response& response) {
               SendJson(
                   {{"object", "list"}, {"data", nlohmann::ordered_json::array({model_object})}},
                   response);
             }));
  server.Get(R"(/v1/models/(.+))",
             v1([this, model_object](const httplib::Request& request, httplib::Response& response) {
               if (request.matches[1] == model_.name) return SendJson(model_object, response);
               SendError(absl::NotFoundError(absl::StrCat("The model `", request.matches[1].str(),
                                                          "` does not exist; this server serves `",
                                                          model_.name, "`")),
                         response);
             }));
  AddTokenizeRoutes(server, model_, v1);
  server.Get("/health", [this](const httplib::Request&, httplib::Response& response) {
    // Load balancers and probes read the status code; the body says the same for people.
    response.status = draining_ ? 503 : 200;
    SendJson({{"status", draining_ ? "draining" : "serving"}}, response);
  });
  if (registry != nullptr) AddMetricsRoute(server, std::move(registry));
  server.set_error_handler(httplib::Server::HandlerWithResponse(
      [this](const httplib::Request& request, httplib::Response& response) {
        if (!response.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        // Without a key, an unknown /v1/ route answers 401 like a known one: which routes
        // exist is for key holders to learn.
        if (absl::StartsWith(request.path, "/v1/") &&
            RefuseUnauthenticated(api_keys_, metrics_, request, response)) {
          return httplib::Server::HandlerResponse::Handled;
        }
        const std::vector<std::string> methods = MethodsOf(request.path);
        if (response.status == 404 && !methods.empty()) {
          // The path is known; only the method is not (cpp-httplib found no handler).
          SendError(absl::InvalidArgumentError(
                        absl::StrCat(request.method, " ", request.path, " is not served; ",
                                     request.path, " answers ", absl::StrJoin(methods, ", "))),
                    response);
          response.status = 405;
          response.set_header("Allow", absl::StrJoin(methods, ", "));
          return httplib::Server::HandlerResponse::Handled;
        }
        const int status = response.status;
        SendError(LibraryError(request, status), response);
        response.status = status;
        return httplib::Server::HandlerResponse::Handled;
      }));
  server.set_exception_handler(
      [](const httplib::Request&, httplib::Response& response, std::exception_ptr error) {
        std::string what = "unknown exception";
        try {
          std::rethrow_exception(error);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        SendError(absl::InternalError(absl::StrCat("internal error: ", what)), response);
      });
}

}  // namespace slotserve::server::http
