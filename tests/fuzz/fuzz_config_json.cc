// libFuzzer target: config.json text -> ParseModelConfig (strict JSON, every key validated).
// Any input must give a config or a clear error; never a crash, leak or undefined behaviour.
#include <cstddef>
#include <cstdint>
#include <string>

#include "models/model_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<slotserve::models::ModelConfig> config =
      slotserve::models::ParseModelConfig(text, "config.json");
  if (!config.ok() && config.status().message().empty()) __builtin_trap();  // errors must say why
  return 0;
}
