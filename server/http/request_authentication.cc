#include "server/http/request_authentication.h"

#include <string>
#include <utility>

#include "server/http/openai_generation.h"

namespace slotserve::server::http {

bool RefuseUnauthenticated(const ApiKeyStore* keys, ServerMetrics* metrics,
                           const httplib::Request& request, httplib::Response& response) {
  if (keys == nullptr) return false;
  // cpp-httplib compares header names case-insensitively.
  const std::string authorization = request.get_header_value("Authorization");
  const absl::Status checked = keys->Authenticate(authorization);
  if (checked.ok()) return false;
  if (metrics != nullptr) metrics->OnUnauthenticated("http");
  SendError(checked, response);
  response.set_header("WWW-Authenticate", "Bearer");  // RFC 6750: the scheme a retry needs
  return true;
}

httplib::Server::Handler Authenticated(const ApiKeyStore* keys, ServerMetrics* metrics,
                                       httplib::Server::Handler handler) {
  if (keys == nullptr) return handler;
  return [keys, metrics, handler = std::move(handler)](const httplib::Request& request,
                                                       httplib::Response& response) {
    if (RefuseUnauthenticated(keys, metrics, request, response)) return;
    handler(request, response);
  };
}

}  // namespace slotserve::server::http
