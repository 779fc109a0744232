// generation_config.json (generation_config.h): the keys used, the keys ignored, and a refusal
// naming the file and the key for every malformed used key.
#include "models/generation_config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace slotserve::models {
namespace {

constexpr int kVocab = 32000;

absl::StatusOr<GenerationConfig> Parse(const std::string& text) {
  return ParseGenerationConfig(text, "generation_config.json", kVocab);
}

void ExpectRefused(const std::string& text, const std::string& message) {
  absl::StatusOr<GenerationConfig> config = Parse(text);
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument) << text;
  EXPECT_EQ(config.status().message(), message) << text;
}

TEST(GenerationConfigTest, ReadsTheUsedKeysAndIgnoresHuggingFacesOthers) {
  absl::StatusOr<GenerationConfig> config = Parse(R"({
    "_from_model_config": true, "bos_token_id": 1, "eos_token_id": [2, 32001, 7],
    "pad_token_id": 0, "max_length": 4096, "max_new_tokens": 77, "num_beams": 1,
    "transformers_version": "4.40.0", "do_sample": true, "temperature": 0.6, "top_k": 40,
    "top_p": 0.9, "min_p": 0.05, "repetition_penalty": 1.1})");
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument)
      << "32001 is outside a 32,000-token vocabulary";
  EXPECT_EQ(config.status().message(),
            "generation_config.json: eos_token_id[1] must be a token id in [0, 32000) or a list "
            "of them, got 32001");
  config = Parse(R"({
    "_from_model_config": true, "bos_token_id": 1, "eos_token_id": [2, 31999, 7],
    "pad_token_id": 0, "max_length": 4096, "max_new_tokens": 77, "num_beams": 1,
    "transformers_version": "4.40.0", "do_sample": true, "temperature": 0.6, "top_k": 40,
    "top_p": 0.9, "min_p": 0.05, "repetition_penalty": 1.1})");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->eos_token_ids, (std::vector<int32_t>{2, 31999, 7}));
  EXPECT_EQ(config->do_sample, true);
  EXPECT_EQ(config->temperature, 0.6f);
  EXPECT_EQ(config->top_k, 40);
  EXPECT_EQ(config->top_p, 0.9f);
  EXPECT_EQ(config->min_p, 0.05f);
  EXPECT_EQ(config->repetition_penalty, 1.1f);
}

TEST(GenerationConfigTest, AnIdAloneAndNullsAndAnEmptyObject) {
  absl::StatusOr<GenerationConfig> config =
      Parse(R"({"eos_token_id": 2, "temperature": null, "top_p": null})");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->eos_token_ids, (std::vector<int32_t>{2}));
  EXPECT_FALSE(config->temperature.has_value());
  EXPECT_FALSE(config->top_p.has_value());
  config = Parse("{}");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->eos_token_ids.empty());
  EXPECT_FALSE(config->do_sample.has_value());
  EXPECT_FALSE(config->top_k.has_value());
}

TEST(GenerationConfigTest, RefusesMalformedUsedKeysNamingFileAndKey) {
  ExpectRefused("[1, 2]", "generation_config.json: must be a JSON object, got [1,2]");
  ExpectRefused(R"({"eos_token_id": "</s>"})",
                "generation_config.json: eos_token_id must be a token id in [0, 32000) or a "
                "list of them, got \"</s>\"");
  ExpectRefused(R"({"eos_token_id": []})",
                "generation_config.json: eos_token_id must be a token id in [0, 32000) or a "
                "list of them, got []");
  ExpectRefused(R"({"eos_token_id": [2, -1]})",
                "generation_config.json: eos_token_id[1] must be a token id in [0, 32000) or a "
                "list of them, got -1");
  ExpectRefused(R"({"temperature": "hot"})",
                "generation_config.json: temperature must be a number, got \"hot\"");
  ExpectRefused(R"({"temperature": -0.5})",
                "generation_config.json: temperature must be >= 0, got -0.5");
  ExpectRefused(R"({"top_p": 0})", "generation_config.json: top_p must be in (0, 1], got 0");
  ExpectRefused(R"({"top_p": 1.5})", "generation_config.json: top_p must be in (0, 1], got 1.5");
  ExpectRefused(R"({"min_p": 2})", "generation_config.json: min_p must be in [0, 1], got 2");
  ExpectRefused(R"({"top_k": 1.5})", "generation_config.json: top_k must be an integer, got 1.5");
  ExpectRefused(R"({"top_k": -1})", "generation_config.json: top_k must be >= 0, got -1");
  ExpectRefused(R"({"repetition_penalty": 0})",
                "generation_config.json: repetition_penalty must be > 0, got 0");
  ExpectRefused(R"({"do_sample": "no"})",
                "generation_config.json: do_sample must be true or false, got \"no\"");
}

TEST(GenerationConfigTest, SyntaxErrorsNameTheFile) {
  absl::StatusOr<GenerationConfig> config = Parse(R"({"eos_token_id": 2,)");
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(config.status().message(), "generation_config.json"))
      << config.status();
}

TEST(GenerationConfigTest, LoadsFromTheDirectoryOrReportsNone) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "generation_config_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  absl::StatusOr<std::optional<GenerationConfig>> loaded = LoadGenerationConfig(dir, kVocab);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_FALSE(loaded->has_value());
  std::ofstream(dir / "generation_config.json") << R"({"eos_token_id": [2, 3], "top_k": 5})";
  loaded = LoadGenerationConfig(dir, kVocab);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_TRUE(loaded->has_value());
  EXPECT_EQ((*loaded)->eos_token_ids, (std::vector<int32_t>{2, 3}));
  EXPECT_EQ((*loaded)->top_k, 5);
  std::ofstream(dir / "generation_config.json") << R"({"top_k": "five"})";
  loaded = LoadGenerationConfig(dir, kVocab);
  EXPECT_EQ(loaded.status().message(), absl::StrCat((dir / "generation_config.json").string(),
                                                    ": top_k must be an integer, got \"five\""));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace slotserve::models
