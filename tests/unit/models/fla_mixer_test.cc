// The fla mixer registry (models/fla_mixer.h) against what the loaders do with it: every family
// has a complete entry found by its model_type; fla's defaults alone give a valid config (the
// shared reader finds every key it reads); the model_type error lists the registry; and the
// tensors and fused columns of each golden checkpoint are the shared ones plus exactly what
// its family declares.
#include "models/fla_mixer.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "models/fla_config.h"
#include "models/fla_weights.h"
#include "nlohmann/json.hpp"

namespace slotserve::models {
namespace {

const std::filesystem::path kGoldenFla = SLOTSERVE_GOLDEN_FLA_DIR;

TEST(FlaMixerRegistryTest, EveryFamilyHasOneCompleteEntryFoundByItsModelType) {
  std::set<std::string> types;
  for (const FlaMixerFamily* family : FlaMixerFamilies()) {
    ASSERT_NE(family, nullptr);
    types.insert(family->model_type);
    EXPECT_EQ(FindFlaMixerFamily(family->model_type), family);
    EXPECT_NE(family->config_class, nullptr) << family->model_type;
    EXPECT_NE(family->title, nullptr) << family->model_type;
    EXPECT_NE(family->defaults, nullptr) << family->model_type;
    EXPECT_NE(family->read_options, nullptr) << family->model_type;
    EXPECT_NE(family->describe, nullptr) << family->model_type;
    EXPECT_NE(family->projections, nullptr) << family->model_type;
    EXPECT_NE(family->constants, nullptr) << family->model_type;
    EXPECT_NE(family->memory_floats, nullptr) << family->model_type;
    EXPECT_NE(family->run, nullptr) << family->model_type;
  }
  EXPECT_EQ(types, (std::set<std::string>{"abc", "gsa"}));
  EXPECT_EQ(FindFlaMixerFamily("llama"), nullptr);
  EXPECT_EQ(FindFlaMixerFamily(""), nullptr);
}

TEST(FlaMixerRegistryTest, DefaultsAloneGiveAConfigOfTheFamily) {
  for (const FlaMixerFamily* family : FlaMixerFamilies()) {
    const nlohmann::json config = {{"model_type", family->model_type}};
    auto parsed = ParseFlaConfig(config.dump());
    ASSERT_TRUE(parsed.ok()) << family->model_type << ": " << parsed.status();
    EXPECT_EQ(parsed->mixer, family);
    EXPECT_EQ(FlaModelTypeName(*parsed), std::string(family->model_type));
    EXPECT_GT(family->memory_floats(*parsed), 0) << family->model_type;
    EXPECT_EQ(
        DescribeFlaAttention(*parsed).rfind(std::string("fla ") + family->model_type + ", ", 0), 0u)
        << DescribeFlaAttention(*parsed);
  }
}

TEST(FlaMixerRegistryTest, TheModelTypeErrorListsTheRegistry) {
  auto parsed = ParseFlaConfig(R"({"model_type": "mamba2"})", "dir/config.json");
  ASSERT_FALSE(parsed.ok());
  const std::string message(parsed.status().message());
  for (const FlaMixerFamily* family : FlaMixerFamilies()) {
    EXPECT_NE(message.find(family->model_type), std::string::npos) << message;
    EXPECT_NE(message.find(family->title), std::string::npos) << message;
  }
  EXPECT_NE(message.find("got \"mamba2\""), std::string::npos) << message;
}

absl::StatusOr<FlaConfig> GoldenConfig(const char* variant) {
  std::ifstream in(kGoldenFla / variant / "config.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return ParseFlaConfig(text);
}

// The start-up line as it has always read, worked out from each config.json by hand.
TEST(FlaMixerRegistryTest, TheStartUpLineIsTheOneItHasAlwaysBeen) {
  const std::pair<const char*, const char*> cases[] = {
      {"abc_rope_clamp", "fla abc, 8 slots, 2 heads (dk 16, dv 32), rope"},
      {"gsa_conv_gqa_sharded",
       "fla gsa, 8 slots, 4 heads over 2 kv heads (dk 8, dv 16), swish feature map, short conv 4"},
      {"gsa_t2r_tied", "fla gsa, 8 slots, 2 heads (dk 32, dv 32), t2r feature map"},
  };
  for (const auto& [variant, line] : cases) {
    auto config = GoldenConfig(variant);
    ASSERT_TRUE(config.ok()) << variant << ": " << config.status();
    EXPECT_EQ(DescribeFlaAttention(*config), line) << variant;
  }
}

TEST(FlaMixerRegistryTest, LayerTensorsAndColumnsAreTheSharedOnesPlusTheFamilys) {
  for (const char* variant : {"abc_conv_tied_bf16", "abc_rope_clamp", "gsa", "gsa_conv_gqa_sharded",
                              "gsa_legacy_norm_first", "gsa_t2r_tied"}) {
    auto config = GoldenConfig(variant);
    ASSERT_TRUE(config.ok()) << variant << ": " << config.status();
    std::set<std::string> family_tensors;
    int64_t family_width = 0;
    for (const FlaMixerProjection& projection : config->mixer->projections(*config)) {
      family_tensors.insert(projection.name + ".weight");
      family_width += projection.outputs;
    }
    for (const FlaMixerTensor& constant : config->mixer->constants(*config)) {
      family_tensors.insert(constant.name);
    }
    std::set<std::string> shared = {"q_proj.weight", "k_proj.weight", "v_proj.weight",
                                    "o_proj.weight"};
    if (config->use_short_conv) {
      shared.insert({"q_conv1d.weight", "k_conv1d.weight", "v_conv1d.weight"});
    }
    std::set<std::string> layer0;
    const std::string prefix = "model.layers.0.attn.";
    for (const auto& [name, shape] : ExpectedFlaTensors(*config)) {
      if (name.starts_with(prefix)) layer0.insert(name.substr(prefix.size()));
    }
    std::set<std::string> expected = shared;
    expected.insert(family_tensors.begin(), family_tensors.end());
    EXPECT_EQ(layer0, expected) << variant;
    const FlaProjectionColumns columns = FlaInputColumns(*config);
    EXPECT_EQ(columns.width,
              config->key_dim + config->kv_key_dim() + config->kv_value_dim() + family_width)
        << variant;
    ASSERT_EQ(columns.mixer.size(), config->mixer->projections(*config).size()) << variant;
    EXPECT_EQ(columns.mixer.front(),
              config->key_dim + config->kv_key_dim() + config->kv_value_dim())
        << variant;
  }
}

}  // namespace
}  // namespace slotserve::models
