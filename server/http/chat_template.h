// The chat template of a model directory, <model>/chat_template.json: how
// /v1/chat/completions turns a list of messages into the prompt text the model continues.
// slotserve's models are plain language models, so the format is deliberately small: one
// text per role, with {role} and {content} placeholders, rendered for each message in order
// and concatenated, then the generation prompt.
//
//   {
//     "format": "slotserve-chat-template", "format_version": 1,
//     "messages": {"system": "{content}\n\n", "user": "Q: {content}\n",
//                  "assistant": "A: {content}\n"},
//     "generation_prompt": "A:",
//     "stop": ["\nQ:"]
//   }
//
// "messages" is required and lists the roles a request may use; "generation_prompt" (default
// "") is appended unless the request sets add_generation_prompt to false; "stop" (default
// none) is added to every chat request's stop sequences, so the model does not write the
// user's next turn. Unknown keys are an error, as in config.json (docs/MODEL_FORMAT.md). Without
// the file, the default is the kDefault* constants below: "role: content" lines.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/tokenizer.h"

namespace slotserve::server::http {

struct ChatMessage {
  std::string role;
  std::string content;
};

class ChatTemplate {
 public:
  static constexpr std::string_view kFileName = "chat_template.json";
  // The default: roles system, user and assistant, each message "{role}: {content}\n", then
  // "assistant:" (no trailing space: SentencePiece words carry their own leading space), and
  // generation stops before a line that starts the user's turn.
  static constexpr std::string_view kDefaultMessage = "{role}: {content}\n";
  static constexpr std::string_view kDefaultGenerationPrompt = "assistant:";
  static constexpr std::string_view kDefaultStop = "\nuser:";

  static ChatTemplate Default();
  // Parses the file's text; errors are INVALID_ARGUMENT prefixed with `source` and name the key.
  static absl::StatusOr<ChatTemplate> Parse(std::string_view text, const std::string& source);
  // <model_dir>/chat_template.json, or Default() when the directory has none.
  static absl::StatusOr<ChatTemplate> LoadFromModelDir(const std::filesystem::path& model_dir);

  bool AcceptsRole(std::string_view role) const;
  // The accepted roles, sorted, for messages.
  std::vector<std::string> roles() const;
  // The prompt text: every message rendered in order, then the generation prompt when asked.
  std::string Render(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const;
  const std::vector<std::string>& stop() const { return stop_; }
  // Adds each stop as `tokenizer` writes it in generated text, where that differs: a tokenizer
  // that normalises whitespace (SentencePiece's default maps a newline to a space) can never
  // write the default "\nuser:", so its models end a turn at " user:". The rendered prompt
  // reads the same way: each message's newline became a space.
  void AddStopsAsWrittenBy(const engine::Tokenizer& tokenizer);
  // "default" or the file it was read from, for the start-up line.
  const std::string& origin() const { return origin_; }

 private:
  std::map<std::string, std::string, std::less<>> message_formats_;
  std::string generation_prompt_;
  std::vector<std::string> stop_;
  std::string origin_ = "default";
};

}  // namespace slotserve::server::http
