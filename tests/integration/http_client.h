// Real HTTP clients of the OpenAI-compatible API for the integration tests (cpp-httplib's
// client; the openai SDK and curl are exercised by their own tests).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace slotserve::testing {

struct HttpResult {
  int status = 0;  // 0: no answer (the message is in `body`)
  std::string body;
  nlohmann::json json;  // the body parsed, or null when it is not JSON
  std::string content_type;
  std::multimap<std::string, std::string> headers;  // names as the server wrote them
  // The first header named `name` (case-insensitive, as HTTP's are), or "" when none.
  std::string Header(const std::string& name) const;
};

// POST http://127.0.0.1:port/path with `body` (JSON text), or GET when `body` is empty.
HttpResult HttpRequest(int port, const std::string& path, const std::string& body = "");
// Any method, with `headers` added; a non-empty `body` goes as JSON.
HttpResult SendHttp(int port, const std::string& method, const std::string& path,
                    const std::multimap<std::string, std::string>& headers,
                    const std::string& body = "");
inline HttpResult PostJson(int port, const std::string& path, const nlohmann::json& body) {
  return HttpRequest(port, path, body.dump());
}

// What a streamed (server-sent events) response delivered.
struct SseResult {
  int status = 0;
  std::string content_type;
  std::string raw;                     // the body as received
  std::vector<nlohmann::json> events;  // every "data: {...}" event, parsed, in order
  bool done = false;                   // "data: [DONE]" came last
  bool well_formed = true;             // every event was "data: ...\n\n"
  std::string text;                    // choices[0].text / delta.content, concatenated
  std::vector<int32_t> token_ids;      // choices[0].token_ids, concatenated (return_token_ids)
};

// POSTs `body` and reads the event stream. `on_event` (optional) sees each parsed event as it
// arrives; returning false hangs up (closes the connection) right away.
SseResult PostStream(int port, const std::string& path, const nlohmann::json& body,
                     const std::function<bool(const nlohmann::json&)>& on_event = nullptr);

// A completions stream of `choices` choices taken apart by "index": each choice's text, and how
// many of its chunks set a finish_reason. `indexes_in_range` is false when a chunk named an
// index outside [0, choices) (it is then left out).
struct StreamedChoices {
  std::vector<std::string> texts;
  std::vector<int> finishes;
  bool indexes_in_range = true;
};
StreamedChoices SplitChoices(const SseResult& stream, int choices);

}  // namespace slotserve::testing
