// The API-key check of the HTTP API's /v1/ routes (--api-keys-file): the one place where an
// HTTP request's `Authorization: Bearer <key>` header is checked. /health stays open (probes
// carry no keys) and so does /metrics (it is on the metrics listener as well).
#pragma once

#include <functional>

#include <httplib.h>
#include "server/api_keys.h"
#include "server/server_metrics.h"

namespace slotserve::server::http {

// False when `keys` is null (no keys asked for) or the request carries a current key. Else
// true, with `response` set to 401 and OpenAI's invalid_api_key error, counted in `metrics`
// (may be null).
bool RefuseUnauthenticated(const ApiKeyStore* keys, ServerMetrics* metrics,
                           const httplib::Request& request, httplib::Response& response);

// `handler`, run only for requests RefuseUnauthenticated lets in. A wrapper around each
// route's handler rather than cpp-httplib's pre-routing hook: that hook runs before the body
// is read, and a refusal there would leave the body on a keep-alive connection to be parsed
// as the next request.
httplib::Server::Handler Authenticated(const ApiKeyStore* keys, ServerMetrics* metrics,
                                       httplib::Server::Handler handler);

}  // namespace slotserve::server::http
