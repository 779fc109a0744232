// libFuzzer target: the tokenizer.json reader and the encoder behind it. Input: a
// tokenizer.json text, a NUL byte, then text to encode. Loading must fail cleanly or give a
// tokenizer whose ids are in range, whose streamed text (IncrementalDetokenizer) is valid
// UTF-8 and equals Tokenizer::Decode of the ids, with and without special-token parsing.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/utf8.h"
#include "engine/hf_tokenizer.h"
#include "engine/incremental_detokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t split = input.find('\0');
  const std::string_view json = input.substr(0, split);
  const std::string_view text =
      split == std::string_view::npos ? std::string_view() : input.substr(split + 1);
  absl::StatusOr<std::unique_ptr<slotserve::engine::HfTokenizer>> tokenizer =
      slotserve::engine::HfTokenizer::FromJsonText(json, /*config_dir=*/{}, "fuzz.json");
  if (!tokenizer.ok()) {
    if (tokenizer.status().message().empty()) __builtin_trap();  // errors say what is wrong
    return 0;
  }
  for (bool parse_special : {false, true}) {
    absl::StatusOr<std::vector<int32_t>> ids = (*tokenizer)->Encode(text, parse_special);
    if (!ids.ok()) {
      if (slotserve::base::IsValidUtf8(text)) __builtin_trap();  // only bad UTF-8 is refused
      return 0;
    }
    slotserve::engine::IncrementalDetokenizer stream(tokenizer->get());
    std::string streamed;
    for (int32_t id : *ids) {
      if (id < 0 || id >= (*tokenizer)->piece_count()) __builtin_trap();
      const std::string delta = stream.Push(id);
      if (!slotserve::base::IsValidUtf8(delta)) __builtin_trap();
      streamed += delta;
    }
    streamed += stream.Flush();
    if (streamed != (*tokenizer)->Decode(*ids)) __builtin_trap();
  }
  return 0;
}
