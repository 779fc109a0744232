// A greedy request for the engine's tests: `prompt` ids, at most `max_new` new tokens.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "engine/generation_request.h"

namespace slotserve::engine::testing {

inline GenerationRequest Greedy(std::vector<int32_t> prompt, int max_new) {
  GenerationRequest request;
  request.prompt_ids = std::move(prompt);
  request.sampling.temperature = 0.0f;
  request.stopping.max_new_tokens = max_new;
  return request;
}

}  // namespace slotserve::engine::testing
