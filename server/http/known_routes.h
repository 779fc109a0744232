// The HTTP API's routes and the methods each answers, for what cpp-httplib cannot say by
// itself: that a known path asked with the wrong method is 405 with an Allow header (issue 57:
// it answered 404), which methods an OPTIONS request and a CORS preflight are told, and the
// list the 404 message quotes. http_front_end.cc registers the handlers; this table must name
// the same routes (http_api_test checks each answers).
#pragma once

#include <string>
#include <vector>

namespace slotserve::server::http {

// The methods `path` answers ("GET, HEAD, OPTIONS" for a GET route: cpp-httplib serves HEAD from
// the GET handler, and OPTIONS is answered for every route); empty for an unknown path.
std::vector<std::string> MethodsOf(const std::string& path);

// "POST /v1/completions, POST /v1/chat/completions, GET /v1/models, ..." for error messages.
std::string RouteList();

}  // namespace slotserve::server::http
