#include "server/http/openai_request.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/json_document.h"
#include "base/status_macros.h"
#include "server/http/jinja_chat_prompt.h"
#include "server/http/json_params.h"
#include "server/http/openai_inert_fields.h"
#include "server/http/openai_prompts.h"
#include "server/http/openai_source.h"
#include "server/prompt_encoding.h"

namespace slotserve::server::http {
namespace {

// vLLM's beam search parameters: use_beam_search, best_of (the beam width), n (the hypotheses
// returned, as choices 0..n-1, best first) and length_penalty (0 when left out, as gRPC's:
// the plain sum of logprobs). The engine checks their ranges and what beam search refuses
// beside them; an unset temperature means 0 here, as over gRPC.
absl::Status ReadBeam(JsonParams& params, int64_t n, int64_t best_of,
                      engine::GenerationRequest* generation) {
  if (best_of < 2) {
    return InvalidValue("best_of", absl::StrCat("best_of (the beam width) must be > 1 with "
                                                "\"use_beam_search\": true, got ",
                                                best_of));
  }
  // Refused here, in this API's words: the engine's refusal ("logprobs.enabled must be false")
  // would quote a boolean where the client sent a count.
  const nlohmann::json* logprobs = params.Get("logprobs");
  if (logprobs != nullptr && !logprobs->is_null() && *logprobs != false) {
    return InvalidValue(
        "logprobs", absl::StrCat("logprobs must be left out with \"use_beam_search\": true (each "
                                 "choice is a hypothesis ranked by its summed log probability; "
                                 "no per-token logprobs), got ",
                                 logprobs->dump()));
  }
  float length_penalty = 0.0f;
  SLOTSERVE_RETURN_IF_ERROR(params.Float("length_penalty", &length_penalty));
  generation->beam = {.width = best_of, .length_penalty = length_penalty, .n_best = n};
  if (!params.Has("temperature")) generation->sampling.temperature = 0.0f;
  return absl::OkStatus();
}

// n: choices prefilled once and forked (docs/ARCHITECTURE.md "Request state"). best_of > n: that
// many are generated (forked alike) and the n with the highest log probability per token returned
// (best_of.h); the engine's --max-n bounds best_of then. Under beam search best_of is the width
// (ReadBeam).
absl::Status ReadChoices(JsonParams& params, OpenAiRequest* request) {
  engine::GenerationRequest* generation = &request->generation;
  int64_t n = 1;
  SLOTSERVE_RETURN_IF_ERROR(params.Int("n", &n));
  if (n < 1) return InvalidValue("n", absl::StrCat("n must be >= 1, got ", n));
  int64_t best_of = n;
  SLOTSERVE_RETURN_IF_ERROR(params.Int("best_of", &best_of));
  bool beam = false;
  SLOTSERVE_RETURN_IF_ERROR(params.Bool("use_beam_search", &beam));
  if (beam) return ReadBeam(params, n, best_of, generation);
  if (params.Has("length_penalty")) {
    return InvalidValue("length_penalty", "length_penalty needs \"use_beam_search\": true");
  }
  if (best_of < n) {
    return InvalidValue("best_of", absl::StrCat("best_of must be >= n (", n, "), got ", best_of));
  }
  generation->n = n;
  if (best_of > n) {
    generation->n = best_of;
    request->keep_best = n;
    request->names.n = "best_of";  // the engine's limit on n is then best_of's
  }
  return absl::OkStatus();
}

// logit_bias: {"<token id>": bias, ...}, OpenAI's form. Keys must be decimal ids and values
// numbers; the engine checks the ids against the vocabulary and the biases' range.
absl::Status ReadLogitBias(JsonParams& params, engine::SamplingOptions* sampling) {
  const nlohmann::json* bias = params.Get("logit_bias");
  if (bias == nullptr) return absl::OkStatus();
  if (!bias->is_object()) {
    return params.TypeError("logit_bias", "an object of token ids to biases", *bias);
  }
  for (const auto& [key, value] : bias->items()) {
    const bool decimal =
        !key.empty() && key.size() <= 11 &&
        std::all_of(key.begin() + (key[0] == '-' ? 1 : 0), key.end(), absl::ascii_isdigit);
    int32_t id = 0;
    if (!decimal || !absl::SimpleAtoi(key, &id)) {
      return InvalidValue("logit_bias", absl::StrCat("logit_bias keys must be token ids (decimal "
                                                     "integers), got \"",
                                                     key, "\""));
    }
    if (!value.is_number()) {
      return InvalidValue("logit_bias",
                          absl::StrCat("logit_bias[\"", key, "\"] must be a number, got ",
                                       base::JsonForMessage(value)));
    }
    sampling->logit_bias.push_back({id, value.get<float>()});
  }
  // In id order, as gRPC's map is read (request_parsing.cc).
  std::sort(sampling->logit_bias.begin(), sampling->logit_bias.end(),
            [](const auto& a, const auto& b) { return a.id < b.id; });
  return absl::OkStatus();
}

absl::Status ReadSampling(JsonParams& params, engine::SamplingOptions* sampling) {
  SLOTSERVE_RETURN_IF_ERROR(params.Float("temperature", &sampling->temperature));
  SLOTSERVE_RETURN_IF_ERROR(params.Float("top_p", &sampling->top_p));
  SLOTSERVE_RETURN_IF_ERROR(params.Int32("top_k", &sampling->top_k));
  if (sampling->top_k == -1) sampling->top_k = 0;  // vLLM's spelling of "off"
  SLOTSERVE_RETURN_IF_ERROR(params.Float("min_p", &sampling->min_p));
  SLOTSERVE_RETURN_IF_ERROR(params.Float("repetition_penalty", &sampling->repetition_penalty));
  SLOTSERVE_RETURN_IF_ERROR(params.Float("presence_penalty", &sampling->presence_penalty));
  SLOTSERVE_RETURN_IF_ERROR(params.Float("frequency_penalty", &sampling->frequency_penalty));
  if (params.Has("seed")) {
    uint64_t seed = 0;
    SLOTSERVE_RETURN_IF_ERROR(params.Uint64("seed", &seed));
    sampling->seed = seed;
  }
  return ReadLogitBias(params, sampling);
}

// max_tokens (chat: max_completion_tokens first, as OpenAI now names it), min_tokens, stop,
// stop_token_ids, ignore_eos.
absl::Status ReadStopping(JsonParams& params, Endpoint endpoint, OpenAiRequest* request) {
  engine::StoppingOptions& stopping = request->generation.stopping;
  std::string& name = request->names.max_tokens;
  if (endpoint == Endpoint::kChat && params.Has("max_completion_tokens")) {
    name = "max_completion_tokens";
    params.Accept("max_tokens");
  }
  int64_t max_tokens = endpoint == Endpoint::kCompletions ? kCompletionsDefaultMaxTokens : 0;
  if (params.Has(name)) {
    SLOTSERVE_RETURN_IF_ERROR(params.Int(name, &max_tokens));
    // The engine reads 0 as "its default"; on this API leaving the parameter out says that.
    if (max_tokens < 1) {
      return InvalidValue(name, absl::StrCat(name,
                                             " must be >= 1 (leave it out or null for the "
                                             "default), got ",
                                             max_tokens));
    }
  }
  stopping.max_new_tokens = max_tokens;
  SLOTSERVE_RETURN_IF_ERROR(params.Int("min_tokens", &stopping.min_new_tokens));
  SLOTSERVE_RETURN_IF_ERROR(params.Strings("stop", &stopping.stop_sequences));
  SLOTSERVE_RETURN_IF_ERROR(params.Int32s("stop_token_ids", &stopping.stop_token_ids));
  return params.Bool("ignore_eos", &stopping.ignore_eos);
}

absl::Status ReadStreamOptions(JsonParams& params, OpenAiRequest* request) {
  SLOTSERVE_RETURN_IF_ERROR(params.Bool("stream", &request->stream));
  const nlohmann::json* options = params.Get("stream_options");
  if (options == nullptr) return absl::OkStatus();
  if (!options->is_object()) {
    return params.TypeError("stream_options", "an object such as {\"include_usage\": true}",
                            *options);
  }
  if (!request->stream) {
    return InvalidValue("stream_options", "stream_options is only allowed with \"stream\": true");
  }
  JsonParams nested(*options, "stream_options");
  SLOTSERVE_RETURN_IF_ERROR(nested.Bool("include_usage", &request->include_usage));
  return nested.CheckAllKnown();
}

// What completions and chat share.
absl::Status ReadCommon(JsonParams& params, const ServedModel& model, Endpoint endpoint,
                        OpenAiRequest* request) {
  request->endpoint = endpoint;
  request->model = model.name;
  SLOTSERVE_RETURN_IF_ERROR(CheckModel(params, model));
  SLOTSERVE_RETURN_IF_ERROR(ReadChoices(params, request));
  SLOTSERVE_RETURN_IF_ERROR(ReadSampling(params, &request->generation.sampling));
  engine::ApplySamplingDefaults(model.sampling_defaults,
                                {.temperature = params.Has("temperature"),
                                 .top_k = params.Has("top_k"),
                                 .top_p = params.Has("top_p"),
                                 .min_p = params.Has("min_p"),
                                 .repetition_penalty = params.Has("repetition_penalty")},
                                &request->generation);
  SLOTSERVE_RETURN_IF_ERROR(ReadStopping(params, endpoint, request));
  SLOTSERVE_RETURN_IF_ERROR(ReadStreamOptions(params, request));
  if (request->keep_best > 0 && request->stream) {
    return InvalidValue(
        "best_of", absl::StrCat("best_of (", request->generation.n, ") > n (", request->keep_best,
                                ") cannot be streamed: the best are known only at "
                                "the end"));
  }
  SLOTSERVE_RETURN_IF_ERROR(params.Bool("return_token_ids", &request->return_token_ids));
  SLOTSERVE_RETURN_IF_ERROR(ReadInertFields(params));  // user, store, metadata, ...
  return ReadSource(params, model, &request->generation);
}

// best_of ranks by log probability: the engine reports it even when the client did not ask
// (the answer then leaves it out).
void RankWithLogprobs(OpenAiRequest* request) {
  engine::LogprobOptions& logprobs = request->generation.logprobs;
  if (request->keep_best == 0 || logprobs.enabled) return;
  logprobs.enabled = true;
  logprobs.top_n = 0;
  request->hide_logprobs = true;
}

// One message's content: a string, or an array of {"type": "text", "text": ...} parts (joined
// with newlines, as vLLM does).
absl::StatusOr<std::string> ReadContent(const nlohmann::json& content, const std::string& path) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) {
    return ParamError(path, "invalid_type",
                      absl::StrCat(path, " must be a string or an array of text parts, got ",
                                   base::JsonForMessage(content)));
  }
  std::vector<std::string> texts;
  for (size_t i = 0; i < content.size(); ++i) {
    const std::string part_path = absl::StrCat(path, "[", i, "]");
    const nlohmann::json& part = content[i];
    if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") ||
        !part["text"].is_string()) {
      return Unsupported(part_path, absl::StrCat("only {\"type\": \"text\", \"text\": ...} "
                                                 "parts are supported, got ",
                                                 base::JsonForMessage(part)));
    }
    texts.push_back(part["text"].get<std::string>());
  }
  return absl::StrJoin(texts, "\n");
}

absl::StatusOr<std::vector<ChatMessage>> ReadMessages(JsonParams& params,
                                                      const ChatTemplate& chat_template) {
  const nlohmann::json* messages = params.Get("messages");
  if (messages == nullptr || !messages->is_array() || messages->empty()) {
    return ParamError("messages", messages == nullptr ? "invalid_value" : "invalid_type",
                      absl::StrCat("messages must be a non-empty array of {\"role\", "
                                   "\"content\"} objects, got ",
                                   messages == nullptr ? "none" : base::JsonForMessage(*messages)));
  }
  std::vector<ChatMessage> parsed;
  for (size_t i = 0; i < messages->size(); ++i) {
    const std::string path = absl::StrCat("messages[", i, "]");
    const nlohmann::json& message = (*messages)[i];
    if (!message.is_object()) {
      return ParamError(path, "invalid_type",
                        absl::StrCat(path, " must be an object with role and content, got ",
                                     base::JsonForMessage(message)));
    }
    JsonParams fields(message, path);
    ChatMessage chat_message;
    SLOTSERVE_RETURN_IF_ERROR(fields.String("role", &chat_message.role));
    if (!chat_template.AcceptsRole(chat_message.role)) {
      return InvalidValue(
          fields.PathOf("role"),
          absl::StrCat(fields.PathOf("role"), " must be one of ",
                       absl::StrJoin(chat_template.roles(), ", "),
                       " (the model's chat template), got \"", chat_message.role, "\""));
    }
    if (const nlohmann::json* content = fields.Get("content"); content != nullptr) {
      SLOTSERVE_ASSIGN_OR_RETURN(chat_message.content,
                                 ReadContent(*content, fields.PathOf("content")));
    }
    fields.Accept("name");  // a participant's name: the template has no place for it
    SLOTSERVE_RETURN_IF_ERROR(fields.CheckAllKnown());
    parsed.push_back(std::move(chat_message));
  }
  return parsed;
}

// Tool calling and structured output are not supported; their "off" values are accepted.
// With the checkpoint's Jinja template, `tools` go into its prompt (jinja_chat_prompt.h).
absl::Status CheckNoTools(JsonParams& params, bool template_takes_tools) {
  const nlohmann::json* tools = params.Get("tools");
  if (!template_takes_tools && tools != nullptr && !(tools->is_array() && tools->empty())) {
    return Unsupported("tools", "tool calling is not supported by this server");
  }
  const nlohmann::json* choice = params.Get("tool_choice");
  if (choice != nullptr && !(choice->is_string() && (*choice == "none" || *choice == "auto"))) {
    return Unsupported("tool_choice", absl::StrCat("tool calling is not supported, got ",
                                                   base::JsonForMessage(*choice)));
  }
  params.Accept("parallel_tool_calls");
  const nlohmann::json* format = params.Get("response_format");
  if (format != nullptr && !(format->is_object() && format->value("type", "") == "text")) {
    return Unsupported("response_format",
                       absl::StrCat("only {\"type\": \"text\"} is supported, got ",
                                    base::JsonForMessage(*format)));
  }
  return absl::OkStatus();
}

// The prompt ids of a chat request: the checkpoint's Jinja template when the model has one,
// else the server's simple template (chat_template.h).
absl::Status ReadChatPrompt(JsonParams& params, const nlohmann::json& body,
                            const nlohmann::ordered_json* ordered_body, const ServedModel& model,
                            OpenAiRequest* request) {
  if (model.jinja_chat_template != nullptr) {
    SLOTSERVE_ASSIGN_OR_RETURN(
        request->generation.prompt_ids,
        RenderJinjaChatPrompt(
            params, ordered_body != nullptr ? *ordered_body : nlohmann::ordered_json(body), model));
    return absl::OkStatus();
  }
  SLOTSERVE_ASSIGN_OR_RETURN(const std::vector<ChatMessage> messages,
                             ReadMessages(params, *model.chat_template));
  bool add_generation_prompt = true;
  SLOTSERVE_RETURN_IF_ERROR(params.Bool("add_generation_prompt", &add_generation_prompt));
  SLOTSERVE_ASSIGN_OR_RETURN(
      request->generation.prompt_ids,
      EncodeText(model.chat_template->Render(messages, add_generation_prompt), "messages",
                 model.tokenizer, model.bos_id));
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckModel(JsonParams& params, const ServedModel& model) {
  std::string asked;
  SLOTSERVE_RETURN_IF_ERROR(params.String("model", &asked));
  if (asked.empty() || asked == model.name) return absl::OkStatus();
  // vLLM's answer, with where to look.
  return ParamError("model", "model_not_found",
                    absl::StrCat("The model `", asked, "` does not exist; this server serves `",
                                 model.name, "` (GET /v1/models)"),
                    absl::StatusCode::kNotFound);
}

absl::Status RequireObject(const nlohmann::json& body) {
  if (body.is_object()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("the request body must be a JSON object, got ", base::JsonForMessage(body)));
}

absl::StatusOr<OpenAiRequest> ParseCompletionRequest(const nlohmann::json& body,
                                                     const ServedModel& model) {
  SLOTSERVE_RETURN_IF_ERROR(RequireObject(body));
  JsonParams params(body);
  OpenAiRequest request;
  SLOTSERVE_RETURN_IF_ERROR(ReadCommon(params, model, Endpoint::kCompletions, &request));
  SLOTSERVE_RETURN_IF_ERROR(params.Bool("echo", &request.echo));
  SLOTSERVE_ASSIGN_OR_RETURN(std::vector<SentPrompt> prompts,
                             ReadPrompts(params, model, request.echo));
  request.generation.prompt_ids = std::move(prompts[0].ids);
  request.echo_text = std::move(prompts[0].echo_text);
  for (size_t i = 1; i < prompts.size(); ++i) {
    request.further_prompts.push_back({std::move(prompts[i].ids), std::move(prompts[i].echo_text)});
  }
  // logprobs: how many alternatives per token (0 = the chosen token's alone); null = none.
  if (const nlohmann::json* logprobs = params.Get("logprobs"); logprobs != nullptr) {
    if (logprobs->is_boolean()) {
      return params.TypeError("logprobs", "an integer (alternatives per token, 0 for none)",
                              *logprobs);
    }
    SLOTSERVE_RETURN_IF_ERROR(params.Int("logprobs", &request.generation.logprobs.top_n));
    request.generation.logprobs.enabled = true;
  }
  if (request.echo) request.generation.logprobs.prompt = request.generation.logprobs.enabled;
  std::string suffix;
  SLOTSERVE_RETURN_IF_ERROR(params.String("suffix", &suffix));
  if (!suffix.empty()) return Unsupported("suffix", "insertion (a suffix) is not supported");
  RankWithLogprobs(&request);
  SLOTSERVE_RETURN_IF_ERROR(params.CheckAllKnown());
  return request;
}

absl::StatusOr<OpenAiRequest> ParseChatRequest(const nlohmann::json& body, const ServedModel& model,
                                               const nlohmann::ordered_json* ordered_body) {
  SLOTSERVE_RETURN_IF_ERROR(RequireObject(body));
  JsonParams params(body);
  OpenAiRequest request;
  request.names.prompt = "messages";
  request.names.top_logprobs = "top_logprobs";
  SLOTSERVE_RETURN_IF_ERROR(RefuseChatForSeq2seq(model));
  SLOTSERVE_RETURN_IF_ERROR(ReadCommon(params, model, Endpoint::kChat, &request));
  SLOTSERVE_RETURN_IF_ERROR(ReadChatPrompt(params, body, ordered_body, model, &request));
  std::vector<std::string>& stops = request.generation.stopping.stop_sequences;
  const std::vector<std::string> template_stops = model.jinja_chat_template != nullptr
                                                      ? std::vector<std::string>()
                                                      : model.chat_template->stop();
  if (request.generation.beam.enabled() && !template_stops.empty()) {
    return Unsupported(
        "use_beam_search",
        absl::StrCat("beam search ends hypotheses at eos, stop_token_ids or the token limit, "
                     "but this model's chat template ends a turn at the text ",
                     base::JsonForMessage(template_stops.front()),
                     ", which it cannot take; use /v1/completions"));
  }
  stops.insert(stops.end(), template_stops.begin(), template_stops.end());

  engine::LogprobOptions& logprobs = request.generation.logprobs;
  SLOTSERVE_RETURN_IF_ERROR(params.Bool("logprobs", &logprobs.enabled));
  if (params.Has("top_logprobs")) {
    SLOTSERVE_RETURN_IF_ERROR(params.Int("top_logprobs", &logprobs.top_n));
    if (!logprobs.enabled) {
      return InvalidValue("top_logprobs", "top_logprobs needs \"logprobs\": true");
    }
  }
  SLOTSERVE_RETURN_IF_ERROR(CheckNoTools(params, model.jinja_chat_template != nullptr));
  RankWithLogprobs(&request);
  SLOTSERVE_RETURN_IF_ERROR(params.CheckAllKnown());
  return request;
}

}  // namespace slotserve::server::http
