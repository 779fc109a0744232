#include "server/http/openai_generation.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "base/json_document.h"
#include "base/status_macros.h"
#include "server/http/beam_choices.h"
#include "server/http/best_of.h"
#include "server/http/openai_errors.h"
#include "server/http/openai_request.h"
#include "server/http/openai_response.h"
#include "server/http/prompt_batch_sink.h"
#include "server/http/token_event_queue.h"

namespace slotserve::server::http {
namespace {

// Longest X-Request-Id taken over as the response id.
constexpr size_t kMaxClientRequestId = 128;

// Retry-After of a 429 (a full queue): a queue's worth of short requests ends within a second.
constexpr char kRetryAfterSeconds[] = "1";

std::string Dump(const nlohmann::ordered_json& value) {
  // Never throws: text the engine streams is valid UTF-8, anything else is replaced.
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// "cmpl-<X-Request-Id>" when the client sent one (as vLLM), else "cmpl-<32 random hex digits>".
std::string ResponseId(Endpoint endpoint, const httplib::Request& request) {
  const char* prefix = endpoint == Endpoint::kChat ? "chatcmpl-" : "cmpl-";
  const std::string client_id = request.get_header_value("X-Request-Id");
  if (!client_id.empty() && client_id.size() <= kMaxClientRequestId) {
    return absl::StrCat(prefix, client_id);
  }
  thread_local absl::BitGen random;
  return absl::StrFormat("%s%016x%016x", prefix, absl::Uniform<uint64_t>(random),
                         absl::Uniform<uint64_t>(random));
}

// Counts the call for shutdown (GenerationGateway::WaitForCallsDone) from the handler's start
// until the response is written: for a stream, until its provider is released.
class CallGuard {
 public:
  explicit CallGuard(GenerationGateway& gateway) : gateway_(gateway) { gateway_.CallStarted(); }
  ~CallGuard() { gateway_.CallDone(); }
  CallGuard(const CallGuard&) = delete;
  CallGuard& operator=(const CallGuard&) = delete;

 private:
  GenerationGateway& gateway_;
};

// One accepted request (one engine request per prompt of a batch): its events, the response it
// becomes, and its call count.
struct Generation {
  Generation(GenerationGateway& gateway, OpenAiRequest parsed, ResponseHeader header,
             const engine::Tokenizer* tokenizer)
      : gateway(gateway),
        request(std::move(parsed)),
        builder(request, std::move(header), tokenizer),
        call(gateway) {}

  // Released when the response is: a stream whose client left before it ended (or before it
  // started: cpp-httplib skips the provider when the headers cannot be written) is cancelled.
  ~Generation() {
    if (events->finished()) return;
    for (engine::RequestId id : ids) gateway.Cancel(id);
  }

  GenerationGateway& gateway;
  OpenAiRequest request;
  ResponseBuilder builder;
  std::shared_ptr<TokenEventQueue> events = std::make_shared<TokenEventQueue>();
  std::vector<engine::RequestId> ids;  // the engine requests submitted, by prompt
  CallGuard call;
};

// Submits the request's engine requests (one per prompt of a batch), recording their ids in
// `generation`. The engine checks every prompt before any is queued, so a bad prompt is
// refused as bad (400, naming it: "prompt[3]") even when the queue could not take the batch
// (429); the batch is queued whole or refused whole (GenerationGateway::SubmitParsedAll), so
// a 429 leaves nothing behind.
absl::Status Submit(GenerationGateway& gateway, Generation& generation,
                    const std::string& response_id) {
  OpenAiRequest& request = generation.request;
  const size_t prompts = 1 + request.further_prompts.size();
  std::vector<engine::GenerationRequest> submitted(prompts, request.generation);
  for (size_t prompt = 0; prompt < prompts; ++prompt) {
    submitted[prompt].request_id = response_id;
    if (prompts == 1) break;
    // The engine's log names each prompt's request apart.
    absl::StrAppend(&submitted[prompt].request_id, "-", prompt);
    if (prompt > 0) submitted[prompt].prompt_ids = request.further_prompts[prompt - 1].ids;
  }
  const int64_t choices_per_prompt = std::max<int64_t>(
      request.generation.beam.enabled() ? request.generation.beam.n_best : request.generation.n, 1);
  auto requests_left = std::make_shared<std::atomic<int>>(static_cast<int>(prompts));
  std::vector<engine::Submission> submissions;
  for (size_t prompt = 0; prompt < prompts; ++prompt) {
    std::shared_ptr<engine::GenerationSink> sink = generation.events;
    if (prompts > 1) {
      sink = std::make_shared<PromptBatchSink>(
          sink, static_cast<int32_t>(prompt * choices_per_prompt), requests_left);
    }
    if (submitted[prompt].beam.enabled()) sink = std::make_shared<BeamChoicesSink>(sink);
    submissions.push_back({std::move(submitted[prompt]), std::move(sink)});
  }
  size_t refused = prompts;
  absl::StatusOr<std::vector<engine::RequestId>> ids =
      gateway.SubmitParsedAll(std::move(submissions), &refused);
  if (!ids.ok()) {
    // The engine's refusal of one prompt ("prompt_ids[3] must be ...") names it in the batch.
    if (prompts > 1 && refused < prompts) {
      request.names.prompt = absl::StrCat("prompt[", refused, "]");
    }
    return ids.status();
  }
  generation.ids = *std::move(ids);
  return absl::OkStatus();
}

// Not valid UTF-8, not JSON, a repeated key: the message says which (and where).
absl::StatusOr<OpenAiRequest> Parse(Endpoint endpoint, const std::string& body,
                                    const ServedModel& model) {
  SLOTSERVE_ASSIGN_OR_RETURN(const nlohmann::json json,
                             base::ParseJsonDocument(body, "request body"));
  if (endpoint == Endpoint::kChat && model.jinja_chat_template != nullptr) {
    // The same document again, its keys in the order sent (it parsed above, so it parses).
    const nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(body);
    return ParseChatRequest(json, model, &ordered);
  }
  return endpoint == Endpoint::kChat ? ParseChatRequest(json, model)
                                     : ParseCompletionRequest(json, model);
}

bool WriteEvent(httplib::DataSink& sink, const std::string& data) {
  const std::string event = absl::StrCat("data: ", data, "\n\n");
  return sink.write(event.data(), event.size());
}

// The body of a streaming response, run on the connection's thread after Handle returned.
// Returns false (cpp-httplib then drops the connection) when the client went away. Each chunk
// carries one choice's news; the stream ends once every choice has.
bool Stream(Generation& generation, httplib::DataSink& sink) {
  for (const nlohmann::ordered_json& start : generation.builder.StreamStart()) {
    if (!WriteEvent(sink, Dump(start))) return false;
  }
  std::vector<engine::Finished> ended;
  while (true) {
    TokenEventQueue::Events events = generation.events->Take(GenerationHandler::kIdleCheck);
    if (events.empty()) {
      if (!sink.is_writable()) return false;  // also notices a peer that closed
      continue;
    }
    for (const TokenEventQueue::ChoiceEvents& choice : events.choices) {
      const engine::Finished* finished = choice.finished ? &*choice.finished : nullptr;
      if (finished != nullptr && !finished->status.ok()) {
        // Cut off after the response began (drain timeout, a model failure): as vLLM, an
        // error event, then the end of the stream (the other choices are cancelled when the
        // Generation is released).
        const ApiError error = ToApiError(finished->status, generation.request.names);
        if (!WriteEvent(sink, Dump(ErrorBody(error)))) return false;
        if (!WriteEvent(sink, "[DONE]")) return false;
        sink.done();
        return true;
      }
      if (choice.tokens.prompt_logprobs.has_value()) {  // an echo's prompt, before any token
        for (const nlohmann::ordered_json& echo : generation.builder.EchoChunks(
                 generation.builder.PromptOf(choice.index), &*choice.tokens.prompt_logprobs)) {
          if (!WriteEvent(sink, Dump(echo))) return false;
        }
      }
      if (std::optional<nlohmann::ordered_json> chunk =
              generation.builder.StreamChunk(choice.tokens, finished)) {
        if (!WriteEvent(sink, Dump(*chunk))) return false;
      }
      if (finished != nullptr) ended.push_back(*finished);
    }
    if (!events.request_done) continue;
    if (generation.request.include_usage) {
      if (!WriteEvent(sink, Dump(generation.builder.UsageChunk(ended)))) return false;
    }
    if (!WriteEvent(sink, "[DONE]")) return false;
    sink.done();
    return true;
  }
}

// Every choice's merged output, once the request ended; the first failure's status instead
// when one ended in error.
absl::StatusOr<std::vector<ChoiceOutput>> AwaitChoices(TokenEventQueue& events) {
  std::map<int32_t, engine::TokenChunk> tokens;
  std::map<int32_t, engine::Finished> ended;
  bool done = false;
  while (!done) {
    TokenEventQueue::Events taken = events.Take(absl::Seconds(1));
    for (TokenEventQueue::ChoiceEvents& choice : taken.choices) {
      AppendTokens(choice.tokens, &tokens[choice.index]);
      if (choice.finished.has_value()) {
        SLOTSERVE_RETURN_IF_ERROR(choice.finished->status);
        ended.emplace(choice.index, *std::move(choice.finished));
      }
    }
    done = taken.request_done;
  }
  std::vector<ChoiceOutput> choices;
  for (auto& [index, finished] : ended) choices.push_back({tokens[index], finished});
  return choices;
}

}  // namespace

void SendJson(const nlohmann::ordered_json& body, httplib::Response& response) {
  response.set_content(Dump(body), "application/json");
}

void SendError(const absl::Status& error, httplib::Response& response, const ParamNames& names) {
  const ApiError api_error = ToApiError(error, names);
  response.status = api_error.http_status;
  // 429 means the queue is full; a client may retry once a few requests have finished, and the
  // SDKs wait for as long as this says before their automatic retry.
  if (api_error.http_status == 429) response.set_header("Retry-After", kRetryAfterSeconds);
  response.set_content(Dump(ErrorBody(api_error)), "application/json");
}

GenerationHandler::GenerationHandler(GenerationGateway& gateway, ServedModel model)
    : gateway_(gateway), model_(std::move(model)) {}

void GenerationHandler::Handle(Endpoint endpoint, const httplib::Request& http_request,
                               httplib::Response& response) {
  absl::StatusOr<OpenAiRequest> parsed = Parse(endpoint, http_request.body, model_);
  if (!parsed.ok()) {
    gateway_.CountRefusal(parsed.status());
    SendError(parsed.status(), response);
    return;
  }
  const std::string response_id = ResponseId(endpoint, http_request);
  auto generation =
      std::make_shared<Generation>(gateway_, *std::move(parsed),
                                   ResponseHeader{response_id, absl::ToUnixSeconds(absl::Now()),
                                                  model_.name, model_.system_fingerprint},
                                   model_.tokenizer);
  if (absl::Status submitted = Submit(gateway_, *generation, response_id); !submitted.ok()) {
    // The prompts of a batch already submitted are cancelled as `generation` is released.
    SendError(submitted, response, generation->request.names);
    return;
  }
  response.set_header("X-Request-Id", response_id);

  if (generation->request.stream) {
    response.set_header("Cache-Control", "no-cache");
    response.set_chunked_content_provider("text/event-stream",
                                          [generation](size_t /*offset*/, httplib::DataSink& sink) {
                                            return Stream(*generation, sink);
                                          });
    return;
  }
  absl::StatusOr<std::vector<ChoiceOutput>> choices = AwaitChoices(*generation->events);
  if (!choices.ok()) {
    SendError(choices.status(), response, generation->request.names);
    return;
  }
  if (const OpenAiRequest& request = generation->request; request.keep_best > 0) {
    *choices = KeepBestChoices(*std::move(choices), request.generation.n, request.keep_best);
  }
  response.set_content(Dump(generation->builder.Complete(*choices)), "application/json");
}

}  // namespace slotserve::server::http
