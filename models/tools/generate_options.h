// Command-line flags of slotserve-generate, parsed without exiting so that every mistake comes
// back as one message.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/backend.h"

namespace slotserve::models {

struct GenerateOptions {
  std::string model_dir;
  std::vector<int32_t> prompt_ids;
  int max_new_tokens = 0;
  // Tokens prefilled per call; nullopt = the whole prompt at once.
  std::optional<int> prefill_chunk;
  std::string dump_logits;  // empty = no dump
  kernels::Backend backend = kernels::Backend::kCpu;
  bool help = false;
};

inline constexpr char kGenerateUsage[] =
    "usage: slotserve-generate --model DIR --prompt-ids 5,17,42 --max-new-tokens N "
    "[--prefill-chunk K] [--dump-logits FILE] [--backend reference|cpu|cuda (default cpu)]";

// Accepts "--flag value" and "--flag=value". argv[0] is skipped.
absl::StatusOr<GenerateOptions> ParseGenerateOptions(const std::vector<std::string>& args);

}  // namespace slotserve::models
