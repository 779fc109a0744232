// Cross-origin requests (CORS) to the HTTP API, for pages in a browser that call it directly:
// --allowed-origins, --allowed-methods and --allowed-headers, named as vLLM names them.
//
// Unlike vLLM (whose three default to "*"), CORS is off unless --allowed-origins is given: a
// server on a laptop or a private network would otherwise answer scripts of every web site its
// users visit. --allowed-methods and --allowed-headers default to "*" as in vLLM: once an
// origin is trusted, the routes' own methods and whatever headers the page sends
// (Authorization included, which a literal "*" does not cover in browsers) are allowed.
#pragma once

#include <string>
#include <vector>

#include <httplib.h>
#include "absl/status/statusor.h"

namespace slotserve::server::http {

struct CorsPolicy {
  std::vector<std::string> origins;  // empty: no CORS headers at all; "*": any origin
  std::vector<std::string> methods;  // "*": each route's own methods
  std::vector<std::string> headers;  // "*": the headers the preflight asks for
};

// From the flags' comma-separated values; an origin must be "*" or scheme://host[:port]
// without a path, or the error quotes it and names --allowed-origins.
absl::StatusOr<CorsPolicy> ParseCorsPolicy(const std::string& allowed_origins,
                                           const std::string& allowed_methods,
                                           const std::string& allowed_headers);

// Adds Access-Control-Allow-Origin (and Vary: Origin), and Access-Control-Expose-Headers
// (X-Request-Id, Retry-After), to `response` when the request's Origin is allowed; false when
// there is no Origin or it is not allowed (then nothing is added).
bool AddCorsHeaders(const CorsPolicy& policy, const httplib::Request& request,
                    httplib::Response& response);

// A preflight (OPTIONS with Access-Control-Request-Method) from an allowed origin: adds the
// allowed methods (`route_methods` when --allowed-methods is "*"), headers and a max age.
void AddPreflightHeaders(const CorsPolicy& policy, const std::vector<std::string>& route_methods,
                         const httplib::Request& request, httplib::Response& response);

}  // namespace slotserve::server::http
