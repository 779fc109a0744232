// The model fingerprint state blobs carry (docs/ARCHITECTURE.md "Request state"): stable for the
// same files, different when the config, the tensor layout or the weights differ, and a clear error
// without files.
#include "models/model_fingerprint.h"

#include <gtest/gtest.h>

#include "tests/unit/models/test_model_dir.h"

namespace slotserve::models {
namespace {

base::Digest FingerprintOf(const std::filesystem::path& dir) {
  absl::StatusOr<base::Digest> fingerprint = ModelFingerprint(dir);
  EXPECT_TRUE(fingerprint.ok()) << fingerprint.status();
  return fingerprint.value_or(base::Digest{});
}

void WriteDir(const std::filesystem::path& dir, const nlohmann::json& config, uint32_t seed) {
  std::filesystem::create_directories(dir);
  testing::WriteFile(dir / "config.json", config.dump(2));
  testing::WriteFile(dir / "model.safetensors",
                     testing::SafetensorsBytes(testing::ExpectedTensorSpecs(config), seed));
}

TEST(ModelFingerprintTest, SameFilesSameFingerprintAndEachChangeShowsUp) {
  testing::TempDir dir;
  const nlohmann::json config = testing::SmallConfig("abc");
  WriteDir(dir.path() / "a", config, 1);
  WriteDir(dir.path() / "b", config, 1);
  WriteDir(dir.path() / "weights", config, 2);
  nlohmann::json other_config = config;
  other_config["eos_id"] = 3;
  WriteDir(dir.path() / "config", other_config, 1);

  const base::Digest a = FingerprintOf(dir.path() / "a");
  EXPECT_EQ(a, FingerprintOf(dir.path() / "a"));
  EXPECT_EQ(a, FingerprintOf(dir.path() / "b"));
  EXPECT_NE(a, FingerprintOf(dir.path() / "weights"));
  EXPECT_NE(a, FingerprintOf(dir.path() / "config"));
}

TEST(ModelFingerprintTest, AMissingDirectoryIsNotFoundNamingTheFile) {
  absl::StatusOr<base::Digest> fingerprint = ModelFingerprint("/nonexistent/model");
  ASSERT_FALSE(fingerprint.ok());
  EXPECT_NE(fingerprint.status().message().find("config.json"), std::string::npos);
}

}  // namespace
}  // namespace slotserve::models
