#include "tests/golden/seq2seq_golden_data.h"

#include <fstream>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace slotserve::golden {

std::filesystem::path Seq2seqGoldenDir() { return SLOTSERVE_GOLDEN_SEQ2SEQ_DIR; }

Seq2seqGolden LoadSeq2seqGolden(const std::filesystem::path& dir, const std::string& logits_file) {
  Seq2seqGolden golden;
  std::ifstream json_file(dir / "golden.json");
  const nlohmann::json json = nlohmann::json::parse(json_file);
  golden.source = json.at("source").get<std::vector<int32_t>>();
  golden.target = json.at("target").get<std::vector<int32_t>>();
  golden.vocab_size = json.at("vocab_size").get<int>();
  std::ifstream logits(dir / logits_file, std::ios::binary);
  golden.logits.resize(golden.target.size() * golden.vocab_size);
  logits.read(reinterpret_cast<char*>(golden.logits.data()),
              static_cast<std::streamsize>(golden.logits.size() * sizeof(float)));
  EXPECT_TRUE(logits) << dir / logits_file;
  return golden;
}

}  // namespace slotserve::golden
