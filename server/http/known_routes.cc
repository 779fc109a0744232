#include "server/http/known_routes.h"

#include <regex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace slotserve::server::http {
namespace {

struct KnownRoute {
  const char* method;
  const char* path;     // as the route list shows it
  const char* pattern;  // the path pattern, as cpp-httplib matches it (the whole path)
};

constexpr KnownRoute kRoutes[] = {
    {"POST", "/v1/completions", "/v1/completions"},
    {"POST", "/v1/chat/completions", "/v1/chat/completions"},
    {"GET", "/v1/models", "/v1/models"},
    {"GET", "/v1/models/{id}", "/v1/models/(.+)"},
    {"POST", "/tokenize", "/tokenize"},
    {"POST", "/detokenize", "/detokenize"},
    {"GET", "/health", "/health"},
    {"GET", "/metrics", "/metrics"},
};

}  // namespace

std::vector<std::string> MethodsOf(const std::string& path) {
  for (const KnownRoute& route : kRoutes) {
    if (!std::regex_match(path, std::regex(route.pattern))) continue;
    if (std::string(route.method) == "GET") return {"GET", "HEAD", "OPTIONS"};
    return {route.method, "OPTIONS"};
  }
  return {};
}

std::string RouteList() {
  return absl::StrJoin(kRoutes, ", ", [](std::string* out, const KnownRoute& route) {
    absl::StrAppend(out, route.method, " ", route.path);
  });
}

}  // namespace slotserve::server::http
