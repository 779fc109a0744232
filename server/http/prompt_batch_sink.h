// A batch of prompts (completions' "prompt": [p0, p1, ...]) is generated as one engine request
// per prompt, answered as one response: each request's events pass through a PromptBatchSink
// into the response's one event queue, numbered as OpenAI numbers a batch's choices (prompt
// p's choice j is choice p * choices_per_prompt + j), and only the last of the requests to end
// marks the response done.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "engine/generation_events.h"

namespace slotserve::server::http {

class PromptBatchSink final : public engine::GenerationSink {
 public:
  // `requests_left` is shared by the batch's sinks and starts at the number of prompts.
  PromptBatchSink(std::shared_ptr<engine::GenerationSink> response, int32_t first_choice,
                  std::shared_ptr<std::atomic<int>> requests_left)
      : response_(std::move(response)),
        first_choice_(first_choice),
        requests_left_(std::move(requests_left)) {}

  void OnTokens(const engine::TokenChunk& chunk) override;
  void OnFinished(const engine::Finished& finished) override;

 private:
  std::shared_ptr<engine::GenerationSink> response_;
  int32_t first_choice_;
  std::shared_ptr<std::atomic<int>> requests_left_;
};

}  // namespace slotserve::server::http
