// Reading fla checkpoints (docs/FLA_CHECKPOINTS.md §1, §2): config.json fields used, ignored or
// refused by name; defaults and derived sizes; sharded weights with their index; every tensor
// checked by name and shape. The golden checkpoints (tests/golden/fla/) are copied to a temp
// directory and broken one way at a time.
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "models/fla_config.h"
#include "models/fla_model.h"
#include "models/fla_weights.h"
#include "models/language_model.h"
#include "models/weight_shards.h"
#include "nlohmann/json.hpp"
#include "tests/unit/models/test_model_dir.h"

namespace slotserve::models {
namespace {

using nlohmann::json;
using testing::TempDir;

const std::filesystem::path kGoldenFla = SLOTSERVE_GOLDEN_FLA_DIR;

json ReadJson(const std::filesystem::path& path) {
  std::ifstream in(path);
  return json::parse(in);
}

void WriteJson(const std::filesystem::path& path, const json& value) {
  std::ofstream(path) << value.dump(2);
}

// A copy of golden checkpoint `variant`, with config.json edited by `edit`.
void CopyVariant(const std::string& variant, const std::filesystem::path& to) {
  std::filesystem::copy(kGoldenFla / variant, to, std::filesystem::copy_options::recursive);
}

std::string LoadError(const std::filesystem::path& dir) {
  auto model = LanguageModel::Load(dir, kernels::Backend::kCpu);
  return model.ok() ? "" : std::string(model.status().message());
}

json GsaConfig() {
  return {{"model_type", "gsa"},    {"hidden_size", 64}, {"num_heads", 2},
          {"num_hidden_layers", 2}, {"vocab_size", 256}, {"num_slots", 8}};
}

TEST(FlaConfigTest, DefaultsAndDerivedSizesFollowFla) {
  auto abc = ParseFlaConfig(R"({"model_type": "abc", "hidden_size": 2048})");
  ASSERT_TRUE(abc.ok()) << abc.status();
  EXPECT_EQ(abc->num_heads, 4);
  EXPECT_EQ(abc->key_dim, 1024);  // expand_k 0.5
  EXPECT_EQ(abc->value_dim, 2048);
  EXPECT_EQ(abc->num_slots, 64);
  EXPECT_TRUE(abc->use_rope);  // ABC's default
  ASSERT_TRUE(abc->clamp_min.has_value());
  EXPECT_EQ(*abc->clamp_min, -32.0f);
  // 2048 * 4 * 2/3 = 5461 -> rounded up to a multiple of 256.
  EXPECT_EQ(abc->intermediate_size, 5632);
  auto gsa = ParseFlaConfig(R"({"model_type": "gsa", "num_slots": null, "num_kv_heads": 2,
                                "exapnd_k": 0.25, "fuse_norm": true, "torch_dtype": "bfloat16"})");
  ASSERT_TRUE(gsa.ok()) << gsa.status();
  EXPECT_EQ(gsa->key_dim, 512);        // the constructor's misspelling is read
  EXPECT_EQ(gsa->num_slots, 512 / 4);  // null -> head_k_dim
  EXPECT_EQ(gsa->num_kv_heads, 2);
  EXPECT_FALSE(gsa->use_rope);
  EXPECT_FALSE(gsa->clamp_min.has_value());
  EXPECT_EQ(gsa->gate_logit_normalizer, 8.0f);
  auto legacy = ParseFlaConfig(R"({"model_type": "gsa", "norm_first": true, "norm_eps": 1e-6})");
  ASSERT_TRUE(legacy.ok()) << legacy.status();
  EXPECT_EQ(legacy->mlp_norm_eps, kLegacyMlpNormEps);
  EXPECT_EQ(legacy->norm_eps, 1e-6f);
}

TEST(FlaConfigTest, RefusesWhatItDoesNotComputeByName) {
  const struct {
    const char* field;
    json value;
    const char* message;
  } cases[] = {
      {"use_beta", true, "unsupported field(s) use_beta for model_type \"gsa\""},
      {"attn", json{{"layers", {0}}}, "attn (hybrid softmax-attention layers) is not supported"},
      {"hidden_act", "powlu", "hidden_act \"powlu\" is not supported"},
      {"num_kv_heads", 3, "num_kv_heads 3 must divide num_heads 2"},
      {"feature_map", "elu", "feature_map \"elu\" is not supported"},
      {"gate_logit_normalizer", 0, "gate_logit_normalizer must not be 0"},
      {"expand_v", 0.5, "elementwise_affine with hidden_size * expand_v = 32 != hidden_size 64"},
      {"use_rope", true, "use_rope true is not supported for gsa"},
      {"num_slots", -1, "num_slots must be a positive integer"},
      {"bos_token_id", 999, "bos_token_id must be null or a token id in [0, 256)"},
      {"clamp_min", "x", ""},  // ignored for gsa (GSABlock never passes it): no error
  };
  for (const auto& c : cases) {
    json config = GsaConfig();
    config[c.field] = c.value;
    auto parsed = ParseFlaConfig(config.dump(), "dir/config.json");
    if (std::string(c.message).empty()) {
      EXPECT_TRUE(parsed.ok()) << c.field << ": " << parsed.status();
      continue;
    }
    ASSERT_FALSE(parsed.ok()) << c.field;
    EXPECT_NE(parsed.status().message().find("dir/config.json: "), std::string::npos);
    EXPECT_NE(parsed.status().message().find(c.message), std::string::npos)
        << c.field << ": " << parsed.status().message();
  }
  auto abc_odd_rope = ParseFlaConfig(
      R"({"model_type": "abc", "hidden_size": 12, "num_heads": 2, "expand_k": 0.5})");
  ASSERT_FALSE(abc_odd_rope.ok());
  EXPECT_NE(
      abc_odd_rope.status().message().find("use_rope needs an even head key dimension, got 3"),
      std::string::npos);
  auto llama = ParseFlaConfig(R"({"model_type": "llama"})");
  ASSERT_FALSE(llama.ok());
  EXPECT_NE(llama.status().message().find("model_type must be one of abc, gsa"), std::string::npos);
}

TEST(FlaCheckpointTest, ShardsAreJoinedAndTheirIndexChecked) {
  auto shards = WeightShards::Open(kGoldenFla / "gsa_conv_gqa_sharded");
  ASSERT_TRUE(shards.ok()) << shards.status();
  EXPECT_EQ(shards->files().size(), 3u);
  const json index = ReadJson(kGoldenFla / "gsa_conv_gqa_sharded" / WeightShards::kIndexFile);
  EXPECT_EQ(shards->tensors().size(), index["weight_map"].size());

  TempDir dir;
  const std::filesystem::path model = dir.path() / "m";
  CopyVariant("gsa_conv_gqa_sharded", model);
  json moved = index;
  const std::string name = "model.norm.weight";
  const std::string right_shard = moved["weight_map"][name];
  moved["weight_map"][name] = right_shard == "model-00001-of-00003.safetensors"
                                  ? "model-00002-of-00003.safetensors"
                                  : "model-00001-of-00003.safetensors";
  WriteJson(model / WeightShards::kIndexFile, moved);
  EXPECT_NE(LoadError(model).find("holds tensor(s) the index does not list there: " + name),
            std::string::npos)
      << LoadError(model);
  json escaping = index;
  escaping["weight_map"][name] = "../elsewhere.safetensors";
  WriteJson(model / WeightShards::kIndexFile, escaping);
  EXPECT_NE(LoadError(model).find("must name a file inside the directory"), std::string::npos)
      << LoadError(model);
  std::filesystem::remove(model / WeightShards::kIndexFile);
  EXPECT_NE(LoadError(model).find("neither model.safetensors nor model.safetensors.index.json"),
            std::string::npos)
      << LoadError(model);
}

TEST(FlaCheckpointTest, TensorsAreCheckedByNameAndShape) {
  TempDir dir;
  const std::filesystem::path model = dir.path() / "m";
  CopyVariant("gsa", model);
  ASSERT_EQ(LoadError(model), "");
  // A config that implies other tensors: the first mismatch is named with both shapes.
  json config = ReadJson(model / "config.json");
  config["num_slots"] = 4;
  WriteJson(model / "config.json", config);
  EXPECT_NE(LoadError(model).find("tensor model.layers.0.attn.f_proj.weight has shape [16, 64], "
                                  "expected [8, 64]"),
            std::string::npos)
      << LoadError(model);
  // Short convolutions asked for but absent: every missing tensor is named.
  config["num_slots"] = 8;
  config["use_short_conv"] = true;
  WriteJson(model / "config.json", config);
  EXPECT_NE(LoadError(model).find("missing tensor(s) model.layers.0.attn.k_conv1d.weight"),
            std::string::npos)
      << LoadError(model);
  // A t2r checkpoint read as swish: its feature-map matrix is unexpected.
  TempDir t2r_dir;
  const std::filesystem::path t2r = t2r_dir.path() / "m";
  CopyVariant("gsa_t2r_tied", t2r);
  json t2r_config = ReadJson(t2r / "config.json");
  t2r_config["feature_map"] = "swish";
  WriteJson(t2r / "config.json", t2r_config);
  EXPECT_NE(
      LoadError(t2r).find("unexpected tensor(s) model.layers.0.attn.feature_map.layer.weight"),
      std::string::npos)
      << LoadError(t2r);
}

TEST(FlaCheckpointTest, LegacyLayoutAndTiedHeadLoad) {
  for (const char* variant : {"gsa_legacy_norm_first", "gsa_t2r_tied", "abc_conv_tied_bf16"}) {
    auto model = LanguageModel::Load(kGoldenFla / variant, kernels::Backend::kCpu);
    ASSERT_TRUE(model.ok()) << variant << ": " << model.status();
    ASSERT_NE((*model)->fla(), nullptr);
    EXPECT_EQ((*model)->config().vocab_size, 256);
  }
}

TEST(FlaCheckpointTest, StateLayoutHoldsTheMixerThenTheConvWindows) {
  auto config =
      ParseFlaConfig(ReadJson(kGoldenFla / "gsa_conv_gqa_sharded" / "config.json").dump());
  ASSERT_TRUE(config.ok());
  const FlaLayerStateLayout layout = FlaStateLayout(*config);
  // 2 kv heads x (8 x 8 + 8 x 16); then 3 rows of q (32), k (16) and v (32) channels.
  EXPECT_EQ(layout.q_conv, 384);
  EXPECT_EQ(layout.k_conv, 384 + 3 * 32);
  EXPECT_EQ(layout.v_conv, 384 + 3 * 32 + 3 * 16);
  EXPECT_EQ(layout.floats, 384 + 3 * (32 + 16 + 32));
}

}  // namespace
}  // namespace slotserve::models
