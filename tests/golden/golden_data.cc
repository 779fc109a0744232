#include "tests/golden/golden_data.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace slotserve::golden {
namespace {

absl::StatusOr<std::string> ReadFile(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot read ", path.string()));
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

}  // namespace

std::filesystem::path GoldenModelsDir() { return SLOTSERVE_GOLDEN_MODELS_DIR; }

std::filesystem::path GoldenFlaDir() { return SLOTSERVE_GOLDEN_FLA_DIR; }

std::vector<std::string> GoldenVariants(const std::filesystem::path& root) {
  std::vector<std::string> variants;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(root, error)) {
    if (std::filesystem::exists(entry.path() / "golden.json")) {
      variants.push_back(entry.path().filename().string());
    }
  }
  std::sort(variants.begin(), variants.end());
  return variants;
}

absl::StatusOr<GoldenData> LoadGoldenData(const std::filesystem::path& variant_dir,
                                          const std::string& logits_file) {
  auto json_text = ReadFile(variant_dir / "golden.json");
  if (!json_text.ok()) return json_text.status();
  GoldenData golden;
  try {
    const nlohmann::json json = nlohmann::json::parse(*json_text);
    golden.tokens = json.at("tokens").get<std::vector<int32_t>>();
    golden.vocab_size = json.at("vocab_size").get<int>();
  } catch (const nlohmann::json::exception& error) {
    return absl::InvalidArgumentError(
        absl::StrCat(variant_dir.string(), "/golden.json: ", error.what()));
  }
  auto logits = ReadFile(variant_dir / logits_file);
  if (!logits.ok()) return logits.status();
  const size_t expected_bytes = golden.tokens.size() * golden.vocab_size * sizeof(float);
  if (logits->size() != expected_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(variant_dir.string(), "/", logits_file, " has ",
                                                   logits->size(), " bytes, expected ",
                                                   expected_bytes));
  }
  golden.logits.resize(golden.tokens.size() * golden.vocab_size);
  std::memcpy(golden.logits.data(), logits->data(), expected_bytes);  // little-endian host
  return golden;
}

float MaxAbsDiff(std::span<const float> a, std::span<const float> b) {
  if (a.size() != b.size()) return std::numeric_limits<float>::infinity();
  float max_diff = 0.0f;
  for (size_t i = 0; i < a.size(); ++i) {
    const float diff = std::fabs(a[i] - b[i]);
    if (!std::isfinite(diff)) return std::numeric_limits<float>::infinity();
    max_diff = std::max(max_diff, diff);
  }
  return max_diff;
}

}  // namespace slotserve::golden
