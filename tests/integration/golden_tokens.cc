#include "tests/integration/golden_tokens.h"

#include <algorithm>
#include <fstream>

#include "nlohmann/json.hpp"

namespace slotserve::testing {

Golden LoadGolden(const std::filesystem::path& dir, const std::string& logits_file) {
  Golden golden;
  std::ifstream json_file(dir / "golden.json");
  const nlohmann::json json = nlohmann::json::parse(json_file);
  golden.tokens = json["tokens"].get<std::vector<int32_t>>();
  golden.vocab = json["vocab_size"].get<int>();
  std::ifstream logits(dir / logits_file, std::ios::binary);
  golden.logits.resize(golden.tokens.size() * golden.vocab);
  logits.read(reinterpret_cast<char*>(golden.logits.data()),
              static_cast<std::streamsize>(golden.logits.size() * sizeof(float)));
  return golden;
}

int32_t Argmax(const Golden& golden, size_t row) {
  const float* begin = golden.logits.data() + row * golden.vocab;
  return static_cast<int32_t>(std::max_element(begin, begin + golden.vocab) - begin);
}

}  // namespace slotserve::testing
