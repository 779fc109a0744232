#include "server/http/openai_inert_fields.h"

#include "absl/strings/str_cat.h"
#include "server/http/openai_errors.h"

namespace slotserve::server::http {
namespace {

// A field accepted without effect, checked for its type only.
absl::Status AcceptTyped(JsonParams& params, absl::string_view name, nlohmann::json::value_t type,
                         absl::string_view expected) {
  const nlohmann::json* value = params.Get(name);
  if (value == nullptr || value->type() == type) return absl::OkStatus();
  if (type == nlohmann::json::value_t::number_float && value->is_number()) return absl::OkStatus();
  return params.TypeError(name, expected, *value);
}

bool IsEmptyArray(const nlohmann::json& value) { return value.is_array() && value.empty(); }

}  // namespace

absl::Status ReadInertFields(JsonParams& params) {
  using Type = nlohmann::json::value_t;
  for (const char* name : {"service_tier", "user", "safety_identifier", "prompt_cache_key",
                           "reasoning_effort", "verbosity"}) {
    if (absl::Status status = AcceptTyped(params, name, Type::string, "a string"); !status.ok()) {
      return status;
    }
  }
  for (const char* name : {"metadata", "prediction"}) {
    if (absl::Status status = AcceptTyped(params, name, Type::object, "an object"); !status.ok()) {
      return status;
    }
  }
  if (absl::Status status = AcceptTyped(params, "store", Type::boolean, "true or false");
      !status.ok()) {
    return status;
  }

  if (const nlohmann::json* modalities = params.Get("modalities"); modalities != nullptr) {
    if (*modalities != nlohmann::json::array({"text"}) && !IsEmptyArray(*modalities)) {
      return Unsupported("modalities", absl::StrCat("only [\"text\"] can be produced here (the "
                                                    "models write text, not audio), got ",
                                                    modalities->dump()));
    }
  }
  if (const nlohmann::json* audio = params.Get("audio"); audio != nullptr) {
    return Unsupported("audio", "audio output is not produced here (the models write text only)");
  }
  if (params.Get("web_search_options") != nullptr) {
    return Unsupported("web_search_options",
                       "web search is not done here; the answer would come from the model alone");
  }
  if (const nlohmann::json* functions = params.Get("functions");
      functions != nullptr && !IsEmptyArray(*functions)) {
    return Unsupported("functions",
                       "function calls are not supported; the model would never call one");
  }
  if (const nlohmann::json* call = params.Get("function_call");
      call != nullptr && *call != "none") {
    return Unsupported("function_call", absl::StrCat("only \"none\" is supported (function calls "
                                                     "are not), got ",
                                                     call->dump()));
  }
  return absl::OkStatus();
}

}  // namespace slotserve::server::http
