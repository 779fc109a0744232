#include "clients/cli/rpc_errors.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace slotserve::clients {

std::string DescribeRpcFailure(const grpc::Status& status, const std::string& server) {
  // gRPC and absl number the canonical status codes identically.
  const std::string detail =
      absl::StrCat(absl::StatusCodeToString(static_cast<absl::StatusCode>(status.error_code())),
                   ": ", status.error_message());
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      if (absl::StartsWith(status.error_message(), "session store")) {
        return absl::StrCat("the server at ", server,
                            " answered, but its session store is unreachable (requests without "
                            "a session still work there): ",
                            detail);
      }
      // Both "nothing listens there" and "the server is draining" arrive as UNAVAILABLE.
      return absl::StrCat("cannot reach the server at ", server,
                          " or it is shutting down (is slotserve-server running there? does it "
                          "serve TLS, which needs --tls-ca?): ",
                          detail);
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return absl::StrCat("the request to ", server, " ran past --timeout: ", detail);
    case grpc::StatusCode::UNAUTHENTICATED:
      return absl::StrCat("the server at ", server,
                          " needs a valid API key (--api-key or $SLOTSERVE_API_KEY): ", detail);
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return absl::StrCat("the server at ", server, " is overloaded, try again later: ", detail);
    default:
      return absl::StrCat("the server at ", server, " refused the request: ", detail);
  }
}

}  // namespace slotserve::clients
