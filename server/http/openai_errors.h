// OpenAI's error body, {"error": {"message", "type", "param", "code"}}, and the one place where
// statuses become HTTP statuses on the HTTP API (what status_mapping.h is for gRPC).
//
// Errors found at the edge (the JSON request) carry the OpenAI parameter and a short code as
// status payloads (ParamError). Errors from the engine name its own fields
// ("sampling.top_p must be in (0, 1] ..."); they are renamed to the parameter the client sent
// ("top_p must be in (0, 1] ..."), so validation stays the engine's alone (the README's "The HTTP
// API": the same validation as gRPC).
#pragma once

#include <optional>
#include <string>
#include "absl/strings/string_view.h"

#include <nlohmann/json.hpp>
#include "absl/status/status.h"

namespace slotserve::server::http {

// An INVALID_ARGUMENT (or `code`'s status) whose body names `param` and gives `code`
// ("invalid_type", "invalid_value", "unknown_parameter", "unsupported_value", ...).
absl::Status ParamError(absl::string_view param, absl::string_view code, absl::string_view message,
                        absl::StatusCode status = absl::StatusCode::kInvalidArgument);
// ParamError with code "invalid_value": `param` holds a value this API refuses.
absl::Status InvalidValue(absl::string_view param, absl::string_view message);
// ParamError with code "unsupported_value" and the message "<param>: <what>".
absl::Status Unsupported(absl::string_view param, absl::string_view what);

// What the client called the engine's fields in this request.
struct ParamNames {
  std::string prompt = "prompt";          // "messages" for chat
  std::string max_tokens = "max_tokens";  // or "max_completion_tokens"
  std::string top_logprobs = "logprobs";  // "top_logprobs" for chat
  std::string n = "n";                    // "best_of" when best_of > n sets the engine's n
};

struct ApiError {
  int http_status = 500;
  std::string message;
  std::string type;
  std::optional<std::string> param;
  std::optional<std::string> code;
};

// INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE -> 400 (invalid_request_error, naming
// the parameter); UNAUTHENTICATED -> 401 (invalid_api_key); NOT_FOUND -> 404; RESOURCE_EXHAUSTED ->
// 429 (the queue is full); UNAVAILABLE -> 503 (draining or stopped); DEADLINE_EXCEEDED -> 504;
// anything else -> 500.
ApiError ToApiError(const absl::Status& status, const ParamNames& names = {});

// {"error": {...}}
nlohmann::ordered_json ErrorBody(const ApiError& error);

}  // namespace slotserve::server::http
