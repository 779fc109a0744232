// generation_config.json, as Hugging Face writes it beside config.json: the ids that end
// generation and the sampling defaults the checkpoint's authors chose. vLLM applies them with
// `--generation-config auto` (its default); slotserve reads the same keys the same way.
//
// Keys used (each optional; null = absent):
//   eos_token_id        an id or a list of ids, each in [0, vocab_size): all end generation
//   do_sample           false: greedy (temperature 0), whatever temperature / top_k / top_p say
//   temperature         >= 0
//   top_k               >= 0 (0 = off)
//   top_p               in (0, 1]
//   min_p               in [0, 1]
//   repetition_penalty  > 0
// Every other key (bos_token_id, pad_token_id, max_length, max_new_tokens,
// transformers_version, num_beams, ...) is accepted and has no effect: HF writes many, and
// the server's own flags decide lengths and beams.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace slotserve::models {

struct GenerationConfig {
  std::vector<int32_t> eos_token_ids;  // in file order
  std::optional<bool> do_sample;
  std::optional<float> temperature;
  std::optional<int32_t> top_k;
  std::optional<float> top_p;
  std::optional<float> min_p;
  std::optional<float> repetition_penalty;
};

// Parses the text of a generation_config.json. INVALID_ARGUMENT naming `source` and the key,
// quoting the value ("generation_config.json: top_p must be in (0, 1], got 1.5"), for a text
// that is not a JSON object or a used key of the wrong type or range.
absl::StatusOr<GenerationConfig> ParseGenerationConfig(const std::string& text,
                                                       const std::string& source, int vocab_size);

// `model_dir`/generation_config.json, or nullopt when the directory has none.
absl::StatusOr<std::optional<GenerationConfig>> LoadGenerationConfig(
    const std::filesystem::path& model_dir, int vocab_size);

}  // namespace slotserve::models
