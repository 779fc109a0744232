#include "tests/integration/http_client.h"

#include <httplib.h>

#include "absl/strings/match.h"

namespace slotserve::testing {
namespace {

httplib::Client Client(int port) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(60, 0);
  return client;
}

// choices[0]'s text and ids of one event, appended.
void Collect(const nlohmann::json& event, SseResult* result) {
  if (!event.contains("choices") || event["choices"].empty()) return;
  const nlohmann::json& choice = event["choices"][0];
  if (choice.contains("text")) result->text += choice["text"].get<std::string>();
  if (choice.contains("delta") && choice["delta"].contains("content")) {
    result->text += choice["delta"]["content"].get<std::string>();
  }
  if (choice.contains("token_ids")) {
    for (const auto& id : choice["token_ids"]) result->token_ids.push_back(id.get<int32_t>());
  }
}

}  // namespace

std::string HttpResult::Header(const std::string& name) const {
  for (const auto& [key, value] : headers) {
    if (absl::EqualsIgnoreCase(key, name)) return value;
  }
  return "";
}

HttpResult HttpRequest(int port, const std::string& path, const std::string& body) {
  return SendHttp(port, body.empty() ? "GET" : "POST", path, {}, body);
}

HttpResult SendHttp(int port, const std::string& method, const std::string& path,
                    const std::multimap<std::string, std::string>& headers,
                    const std::string& body) {
  httplib::Client client = Client(port);
  httplib::Request request;
  request.method = method;
  request.path = path;
  for (const auto& [name, value] : headers) request.set_header(name.c_str(), value.c_str());
  if (!body.empty()) {
    request.body = body;
    request.set_header("Content-Type", "application/json");
  }
  const httplib::Result answer = client.send(request);
  HttpResult result;
  if (!answer) {
    result.body = httplib::to_string(answer.error());
    return result;
  }
  result.status = answer->status;
  result.body = answer->body;
  result.content_type = answer->get_header_value("Content-Type");
  result.headers.insert(answer->headers.begin(), answer->headers.end());
  result.json = nlohmann::json::parse(result.body, nullptr, /*allow_exceptions=*/false);
  if (result.json.is_discarded()) result.json = nullptr;
  return result;
}

SseResult PostStream(int port, const std::string& path, const nlohmann::json& body,
                     const std::function<bool(const nlohmann::json&)>& on_event) {
  httplib::Client client = Client(port);
  SseResult result;
  std::string pending;  // bytes of an event not yet complete
  httplib::Request request;
  request.method = "POST";
  request.path = path;
  request.body = body.dump();
  request.set_header("Content-Type", "application/json");
  request.response_handler = [&](const httplib::Response& response) {
    result.status = response.status;
    result.content_type = response.get_header_value("Content-Type");
    return true;
  };
  request.content_receiver = [&](const char* data, size_t size, uint64_t, uint64_t) {
    result.raw.append(data, size);
    pending.append(data, size);
    size_t end;
    while ((end = pending.find("\n\n")) != std::string::npos) {
      const std::string event = pending.substr(0, end);
      pending.erase(0, end + 2);
      if (event.rfind("data: ", 0) != 0 || result.done) {
        result.well_formed = false;
        continue;
      }
      const std::string data_text = event.substr(6);
      if (data_text == "[DONE]") {
        result.done = true;
        continue;
      }
      nlohmann::json parsed = nlohmann::json::parse(data_text, nullptr, false);
      if (parsed.is_discarded()) {
        result.well_formed = false;
        continue;
      }
      Collect(parsed, &result);
      result.events.push_back(parsed);
      if (on_event && !on_event(parsed)) return false;
    }
    return true;
  };
  const httplib::Result answer = client.send(request);
  if (answer && result.status == 0) result.status = answer->status;
  if (!pending.empty()) result.well_formed = false;
  return result;
}

StreamedChoices SplitChoices(const SseResult& stream, int choices) {
  StreamedChoices split;
  split.texts.resize(choices);
  split.finishes.assign(choices, 0);
  for (const nlohmann::json& event : stream.events) {
    for (const nlohmann::json& choice : event["choices"]) {
      const int index = choice["index"];
      if (index < 0 || index >= choices) {
        split.indexes_in_range = false;
        continue;
      }
      split.texts[index] += choice["text"].get<std::string>();
      if (!choice["finish_reason"].is_null()) ++split.finishes[index];
    }
  }
  return split;
}

}  // namespace slotserve::testing
