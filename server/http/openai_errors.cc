#include "server/http/openai_errors.h"

#include <array>
#include <string_view>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "server/field_renaming.h"

namespace slotserve::server::http {
namespace {

constexpr absl::string_view kParamPayload = "type.slotserve.dev/openai-param";
constexpr absl::string_view kCodePayload = "type.slotserve.dev/openai-code";

std::optional<std::string> Payload(const absl::Status& status, absl::string_view url) {
  absl::optional<absl::Cord> value = status.GetPayload(url);
  if (!value.has_value()) return std::nullopt;
  return std::string(*value);
}

// Renames the engine field a validation message starts with ("sampling.top_p must ...") to
// the client's parameter; returns the parameter (with any index, "stop[2]"), or nullopt when
// the message names no known field.
std::optional<std::string> RenameEngineField(const ParamNames& names, std::string* message) {
  // Longest first where one name starts another (prompt_ids before prompt).
  const std::array<FieldRename, 24> fields = {{
      {"sampling.temperature", "temperature"},
      {"sampling.top_k", "top_k"},
      {"sampling.top_p", "top_p"},
      {"sampling.min_p", "min_p"},
      {"sampling.repetition_penalty", "repetition_penalty"},
      {"sampling.presence_penalty", "presence_penalty"},
      {"sampling.frequency_penalty", "frequency_penalty"},
      {"sampling.seed", "seed"},
      {"sampling.logit_bias", "logit_bias"},
      {"stopping.max_new_tokens", names.max_tokens},
      {"stopping.min_new_tokens", "min_tokens"},
      {"stopping.stop_sequences", "stop"},
      {"stopping.stop_token_ids", "stop_token_ids"},
      {"logprobs.top_n", names.top_logprobs},
      {"logprobs.enabled", "logprobs"},
      {"logprobs.prompt", "echo"},
      {"prompt_ids", names.prompt},
      {"prompt", names.prompt},
      {"source_ids", "source"},
      {"source", "source"},
      {"n", names.n},
      // Beam search: vLLM's names (openai_request.cc, ReadBeam).
      {"beam.width", "best_of"},
      {"beam.n_best", "n"},
      {"beam.length_penalty", "length_penalty"},
  }};
  const FieldRename* renamed = RenameLeadingField(fields, message);
  if (renamed == nullptr) return std::nullopt;
  // Beam search's refusals quote the width by its engine name ("... with beam.width = 4").
  for (size_t at = message->find("beam.width"); at != std::string::npos;
       at = message->find("beam.width", at)) {
    message->replace(at, 10, "best_of");
  }
  if (renamed->engine_name == "stopping.max_new_tokens") {
    // The engine's encoding of "unset" (0) is not this API's (leave max_tokens out).
    const size_t note = message->find(" (0 = the default");
    if (note != std::string::npos) message->erase(note, message->find(')', note) + 1 - note);
  }
  const size_t param_end = message->find(' ');
  return message->substr(0, param_end);
}

}  // namespace

absl::Status ParamError(absl::string_view param, absl::string_view code, absl::string_view message,
                        absl::StatusCode status_code) {
  absl::Status status(status_code, message);
  status.SetPayload(kParamPayload, absl::Cord(param));
  status.SetPayload(kCodePayload, absl::Cord(code));
  return status;
}

absl::Status InvalidValue(absl::string_view param, absl::string_view message) {
  return ParamError(param, "invalid_value", message);
}

absl::Status Unsupported(absl::string_view param, absl::string_view what) {
  return ParamError(param, "unsupported_value", absl::StrCat(param, ": ", what));
}

ApiError ToApiError(const absl::Status& status, const ParamNames& names) {
  ApiError error;
  error.message = std::string(status.message());
  error.param = Payload(status, kParamPayload);
  error.code = Payload(status, kCodePayload);
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
      error.http_status = 400;
      error.type = "invalid_request_error";
      if (!error.param.has_value()) {
        error.param = RenameEngineField(names, &error.message);
        if (error.param.has_value()) error.code = "invalid_value";
      }
      break;
    case absl::StatusCode::kUnauthenticated:
      // What OpenAI answers for a missing or wrong key, so SDKs raise their auth error.
      error.http_status = 401;
      error.type = "invalid_request_error";
      error.code = error.code.value_or("invalid_api_key");
      break;
    case absl::StatusCode::kNotFound:
      error.http_status = 404;
      error.type = "invalid_request_error";
      break;
    case absl::StatusCode::kResourceExhausted:
      error.http_status = 429;
      error.type = "rate_limit_error";
      error.code = error.code.value_or("queue_full");
      break;
    case absl::StatusCode::kUnavailable:
      error.http_status = 503;
      error.type = "service_unavailable_error";
      error.code = error.code.value_or("unavailable");
      break;
    case absl::StatusCode::kDeadlineExceeded:
      error.http_status = 504;
      error.type = "timeout_error";
      break;
    default:
      error.http_status = 500;
      error.type = "server_error";
      break;
  }
  return error;
}

nlohmann::ordered_json ErrorBody(const ApiError& error) {
  nlohmann::ordered_json body = {{"message", error.message}, {"type", error.type}};
  body["param"] = error.param.has_value() ? nlohmann::ordered_json(*error.param) : nullptr;
  body["code"] = error.code.has_value() ? nlohmann::ordered_json(*error.code) : nullptr;
  return {{"error", std::move(body)}};
}

}  // namespace slotserve::server::http
