// libFuzzer target: config.json text -> ParseModelConfig (strict JSON, every key validated) and
// the fla checkpoint reader ParseFlaConfig (docs/FLA_CHECKPOINTS.md §1), which the loader picks
// when LooksLikeFlaConfig, and the same text as a Hugging Face generation_config.json
// (ParseGenerationConfig). Any input must give a config or a clear error; never a crash, leak or
// undefined behaviour; an accepted fla config's derived sizes must be consistent, and an
// accepted generation config's values in the ranges it promises.
#include <cstddef>
#include <cstdint>
#include <string>

#include "models/fla_config.h"
#include "models/generation_config.h"
#include "models/model_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<slotserve::models::ModelConfig> config =
      slotserve::models::ParseModelConfig(text, "config.json");
  if (!config.ok() && config.status().message().empty()) __builtin_trap();  // errors must say why
  (void)slotserve::models::LooksLikeFlaConfig(text);
  absl::StatusOr<slotserve::models::FlaConfig> fla =
      slotserve::models::ParseFlaConfig(text, "config.json");
  if (!fla.ok() && fla.status().message().empty()) __builtin_trap();
  if (fla.ok()) {
    const slotserve::models::FlaConfig& c = *fla;
    const bool consistent =
        c.num_heads > 0 && c.num_kv_heads > 0 && c.num_heads % c.num_kv_heads == 0 &&
        c.key_dim % c.num_heads == 0 && c.value_dim % c.num_heads == 0 && c.head_k_dim() > 0 &&
        c.head_v_dim() > 0 && c.num_slots > 0 && c.intermediate_size > 0 && c.vocab_size > 0 &&
        c.num_layers > 0 && c.conv_size > 0 && (!c.use_rope || c.head_k_dim() % 2 == 0);
    if (!consistent) __builtin_trap();
  }
  constexpr int kVocab = 32000;
  absl::StatusOr<slotserve::models::GenerationConfig> generation =
      slotserve::models::ParseGenerationConfig(text, "generation_config.json", kVocab);
  if (!generation.ok() && generation.status().message().empty()) __builtin_trap();
  if (generation.ok()) {
    for (const int32_t id : generation->eos_token_ids) {
      if (id < 0 || id >= kVocab) __builtin_trap();
    }
    const auto& g = *generation;
    if ((g.temperature && !(*g.temperature >= 0)) || (g.top_k && *g.top_k < 0) ||
        (g.top_p && !(*g.top_p > 0 && *g.top_p <= 1)) ||
        (g.min_p && !(*g.min_p >= 0 && *g.min_p <= 1)) ||
        (g.repetition_penalty && !(*g.repetition_penalty > 0))) {
      __builtin_trap();
    }
  }
  return 0;
}
