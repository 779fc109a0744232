// libFuzzer target: incremental detokenisation of arbitrary id sequences (a prompt part and a
// generated part) with a real SentencePiece model that has byte-fallback pieces. Every delta
// must be valid UTF-8 on its own, and for in-range ids the deltas must concatenate to
// Tokenizer::Decode of the generated ids (docs/ARCHITECTURE.md "A request's path": streaming never
// splits a character).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/utf8.h"
#include "engine/incremental_detokenizer.h"
#include "engine/tokenizer.h"
#include "tests/fuzz/bundled_tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const slotserve::engine::Tokenizer* tokenizer = slotserve::fuzz::BundledTokenizer();
  if (size < 1) return 0;
  // First byte: how many of the ids are prompt; then 2 bytes per id, taken modulo a range a
  // little past the vocabulary so out-of-range ids are exercised too.
  const size_t prompt_count = data[0] % 8;
  const int range = tokenizer->piece_count() + 4;
  std::vector<int32_t> prompt, generated;
  for (size_t i = 1; i + 1 < size; i += 2) {
    uint16_t raw;
    std::memcpy(&raw, data + i, 2);
    const int32_t id = raw % range;
    (prompt.size() < prompt_count ? prompt : generated).push_back(id);
  }
  slotserve::engine::IncrementalDetokenizer detokenizer(tokenizer);
  detokenizer.Prime(prompt);
  std::string text;
  bool all_in_range = true;
  for (int32_t id : generated) {
    all_in_range = all_in_range && id < tokenizer->piece_count();
    const std::string delta = detokenizer.Push(id);
    if (!slotserve::base::IsValidUtf8(delta)) __builtin_trap();
    text += delta;
  }
  const std::string tail = detokenizer.Flush();
  if (!slotserve::base::IsValidUtf8(tail)) __builtin_trap();
  text += tail;
  if (prompt.empty() && all_in_range) {
    const std::string whole = tokenizer->Decode(generated);
    // Where SentencePiece itself had to replace broken bytes (U+FFFD) it may group them
    // differently; everywhere else the two must agree exactly.
    if (whole.find("\xEF\xBF\xBD") == std::string::npos && whole != text) __builtin_trap();
  }
  return 0;
}
