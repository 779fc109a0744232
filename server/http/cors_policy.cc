#include "server/http/cors_policy.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace slotserve::server::http {
namespace {

// How long a browser may reuse a preflight's answer.
constexpr char kPreflightMaxAgeSeconds[] = "600";
// Answer headers a page's script may read besides the CORS-safelisted ones: the response id
// (for reports) and how long to wait after a 429.
constexpr char kExposedHeaders[] = "X-Request-Id, Retry-After";

std::vector<std::string> CommaList(const std::string& value) {
  std::vector<std::string> items;
  for (absl::string_view item : absl::StrSplit(value, ',', absl::SkipWhitespace())) {
    items.emplace_back(absl::StripAsciiWhitespace(item));
  }
  return items;
}

bool IsWildcard(const std::vector<std::string>& items) {
  return std::find(items.begin(), items.end(), "*") != items.end();
}

// scheme://host[:port], as a browser sends it in Origin: no path, no trailing slash.
bool IsOrigin(const std::string& origin) {
  const size_t scheme_end = origin.find("://");
  if (scheme_end == std::string::npos || scheme_end == 0) return false;
  const std::string host = origin.substr(scheme_end + 3);
  return !host.empty() && host.find('/') == std::string::npos;
}

}  // namespace

absl::StatusOr<CorsPolicy> ParseCorsPolicy(const std::string& allowed_origins,
                                           const std::string& allowed_methods,
                                           const std::string& allowed_headers) {
  CorsPolicy policy{CommaList(allowed_origins), CommaList(allowed_methods),
                    CommaList(allowed_headers)};
  for (const std::string& origin : policy.origins) {
    if (origin != "*" && !IsOrigin(origin)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--allowed-origins: \"", origin,
          "\" is not an origin; give \"*\" or scheme://host[:port] without a path, e.g. "
          "https://app.example.com"));
    }
  }
  for (std::string& method : policy.methods) method = absl::AsciiStrToUpper(method);
  return policy;
}

bool AddCorsHeaders(const CorsPolicy& policy, const httplib::Request& request,
                    httplib::Response& response) {
  if (policy.origins.empty() || !request.has_header("Origin")) return false;
  const std::string origin = request.get_header_value("Origin");
  if (IsWildcard(policy.origins)) {
    response.set_header("Access-Control-Allow-Origin", "*");
  } else if (std::find(policy.origins.begin(), policy.origins.end(), origin) ==
             policy.origins.end()) {
    return false;
  } else {
    response.set_header("Access-Control-Allow-Origin", origin);
    response.set_header("Vary", "Origin");  // caches must not serve this answer to another origin
  }
  response.set_header("Access-Control-Expose-Headers", kExposedHeaders);
  return true;
}

void AddPreflightHeaders(const CorsPolicy& policy, const std::vector<std::string>& route_methods,
                         const httplib::Request& request, httplib::Response& response) {
  response.set_header(
      "Access-Control-Allow-Methods",
      absl::StrJoin(IsWildcard(policy.methods) ? route_methods : policy.methods, ", "));
  const std::string asked = request.get_header_value("Access-Control-Request-Headers");
  const std::string headers =
      IsWildcard(policy.headers) ? asked : absl::StrJoin(policy.headers, ", ");
  if (!headers.empty()) response.set_header("Access-Control-Allow-Headers", headers);
  response.set_header("Access-Control-Max-Age", kPreflightMaxAgeSeconds);
}

}  // namespace slotserve::server::http
