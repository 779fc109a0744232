// config.json parsing: every kind parses into the right fields, and every way of getting a key
// wrong is refused with a message that names the key.
#include "models/model_config.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/models/test_model_dir.h"

namespace slotserve::models {
namespace {

using testing::ErasePath;
using testing::SetPath;
using testing::SmallConfig;

TEST(ModelConfigTest, ParsesEveryKeyOfAnAbcConfig) {
  nlohmann::json json = SmallConfig("abc");
  SetPath(json, "activation", "relu");
  SetPath(json, "position", "none");
  SetPath(json, "position_offset", 2);
  SetPath(json, "tie_embeddings", false);
  auto config = ParseModelConfig(json.dump());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->vocab_size, 40);
  EXPECT_EQ(config->d_model, 16);
  EXPECT_EQ(config->n_layers, 2);
  EXPECT_EQ(config->n_heads, 4);
  EXPECT_EQ(config->head_dim(), 4);
  EXPECT_EQ(config->d_ffn, 24);
  EXPECT_FALSE(config->gelu);
  EXPECT_FLOAT_EQ(config->norm_eps, 1e-5f);
  EXPECT_FALSE(config->sinusoidal_positions);
  EXPECT_EQ(config->position_offset, 2);
  EXPECT_FALSE(config->tie_embeddings);
  EXPECT_FLOAT_EQ(config->embed_scale, 4.0f);
  EXPECT_EQ(config->bos_id, 1);
  EXPECT_EQ(config->eos_id, 2);
  EXPECT_EQ(config->attention.kind, AttentionKind::kAbc);
  EXPECT_EQ(config->attention.memory_rows, 4);
}

TEST(ModelConfigTest, ParsesRfaLunaAndSoftmaxAttention) {
  auto rfa = ParseModelConfig(SmallConfig("rfa").dump());
  ASSERT_TRUE(rfa.ok()) << rfa.status();
  EXPECT_EQ(rfa->attention.kind, AttentionKind::kRfa);
  EXPECT_EQ(rfa->attention.features, 4);
  EXPECT_TRUE(rfa->attention.gate);
  EXPECT_FLOAT_EQ(rfa->attention.feature_scale, 0.5f);
  EXPECT_FLOAT_EQ(rfa->attention.eps, 0.25f);
  EXPECT_FLOAT_EQ(rfa->attention.norm_eps, 1e-3f);
  EXPECT_TRUE(rfa->attention.interleave);

  auto luna = ParseModelConfig(SmallConfig("luna").dump());
  ASSERT_TRUE(luna.ok()) << luna.status();
  EXPECT_EQ(luna->attention.kind, AttentionKind::kLuna);
  EXPECT_EQ(luna->attention.length, 3);
  EXPECT_FALSE(luna->attention.elu1);
  EXPECT_TRUE(luna->attention.tie_kv);

  auto softmax = ParseModelConfig(SmallConfig("softmax").dump());
  ASSERT_TRUE(softmax.ok()) << softmax.status();
  EXPECT_EQ(softmax->attention.kind, AttentionKind::kSoftmax);
  EXPECT_EQ(softmax->attention.max_context, 12);
}

TEST(ModelConfigTest, LoadNamesAMissingFile) {
  auto config = LoadModelConfig("/nonexistent/slotserve/config.json");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(config.status().message().find("/nonexistent/slotserve/config.json"),
            std::string::npos);
}

TEST(ModelConfigTest, LoadReadsAFile) {
  testing::TempDir dir;
  testing::WriteFile(dir.path() / "config.json", SmallConfig("luna").dump());
  auto config = LoadModelConfig(dir.path() / "config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->attention.kind, AttentionKind::kLuna);
}

// One way to break a valid config, and what the refusal must say.
struct Refusal {
  std::string name;
  std::string kind;                                         // SmallConfig(kind) to start from
  std::vector<std::string> erase;                           // dotted paths removed first
  std::vector<std::pair<std::string, nlohmann::json>> set;  // then set
  std::string expected;                                     // substring of the message
};

std::vector<Refusal> Refusals() {
  using json = nlohmann::json;
  return {
      {"SlotsZero",
       "abc",
       {},
       {{"attention.slots", 0}},
       "config.json: attention.slots must be > 0, got 0"},
      {"SlotsNegative",
       "abc",
       {},
       {{"attention.slots", -3}},
       "attention.slots must be > 0, got -3"},
      {"SlotsNotInteger",
       "abc",
       {},
       {{"attention.slots", 2.5}},
       "attention.slots must be an integer"},
      {"SlotsString",
       "abc",
       {},
       {{"attention.slots", "8"}},
       "attention.slots must be an integer, got \"8\""},
      {"MissingSlots", "abc", {"attention.slots"}, {}, "missing key \"attention.slots\""},
      {"MissingDffn", "abc", {"d_ffn"}, {}, "missing key \"d_ffn\""},
      {"MissingAttention", "abc", {"attention"}, {}, "missing key \"attention\""},
      {"MissingFormat", "abc", {"format"}, {}, "missing key \"format\""},
      {"UnknownTopLevelKey", "abc", {}, {{"atention", json::object()}}, "unknown key \"atention\""},
      {"TypoReportedAsUnknown", "abc", {"n_heads"}, {{"n_head", 4}}, "unknown key \"n_head\""},
      {"UnknownAttentionKey", "abc", {}, {{"attention.slot", 4}}, "unknown key \"attention.slot\""},
      {"KeyOfAnotherKind",
       "abc",
       {},
       {{"attention.features", 4}},
       "unknown key \"attention.features\" for attention.kind \"abc\""},
      {"ZeroHeads", "abc", {}, {{"n_heads", 0}}, "n_heads must be > 0, got 0"},
      {"ZeroVocab", "abc", {}, {{"vocab_size", 0}}, "vocab_size must be > 0, got 0"},
      {"NegativeDmodel", "abc", {}, {{"d_model", -16}}, "d_model must be > 0, got -16"},
      {"ZeroLayers", "abc", {}, {{"n_layers", 0}}, "n_layers must be > 0, got 0"},
      {"ZeroFfn", "abc", {}, {{"d_ffn", 0}}, "d_ffn must be > 0, got 0"},
      {"HugeLayers", "abc", {}, {{"n_layers", 1000000}}, "n_layers must be <="},
      {"HugeVocab", "abc", {}, {{"vocab_size", 1ULL << 40}}, "vocab_size must be <="},
      {"DmodelNotDivisible",
       "abc",
       {},
       {{"d_model", 18}},
       "d_model must be a multiple of n_heads 4, got 18"},
      {"OddDmodelSinusoidal", "abc", {}, {{"d_model", 15}, {"n_heads", 3}}, "d_model must be even"},
      {"BosOutsideVocab", "abc", {}, {{"bos_id", 40}}, "bos_id must be <= 39, got 40"},
      {"EosNegative", "abc", {}, {{"eos_id", -1}}, "eos_id must be >= 0, got -1"},
      {"BadActivation",
       "abc",
       {},
       {{"activation", "swish"}},
       "activation must be one of \"gelu\", \"relu\", got \"swish\""},
      {"BadPosition", "abc", {}, {{"position", "rope"}}, "position must be one of"},
      {"NegativePositionOffset",
       "abc",
       {},
       {{"position_offset", -1}},
       "position_offset must be >= 0"},
      {"TieNotBool",
       "abc",
       {},
       {{"tie_embeddings", "yes"}},
       "tie_embeddings must be true or false"},
      {"NormEpsZero", "abc", {}, {{"norm_eps", 0}}, "norm_eps must be > 0"},
      {"NormEpsUnderflowsInFloat32", "abc", {}, {{"norm_eps", 1e-50}}, "norm_eps must be > 0"},
      {"NormEpsString", "abc", {}, {{"norm_eps", "1e-5"}}, "norm_eps must be a number"},
      {"EmbedScaleTooLarge",
       "abc",
       {},
       {{"embed_scale", 1e39}},
       "embed_scale must be a finite float32"},
      {"WrongFormat",
       "abc",
       {},
       {{"format", "gguf"}},
       "format must be \"slotserve-lm\", got \"gguf\""},
      {"WrongFormatVersion", "abc", {}, {{"format_version", 2}}, "format_version must be 1"},
      {"AttentionNotObject", "abc", {}, {{"attention", "abc"}}, "attention must be an object"},
      {"BadAttentionKind",
       "abc",
       {},
       {{"attention.kind", "linear"}},
       "attention.kind must be one of"},
      {"MissingAttentionKind", "abc", {"attention.kind"}, {}, "missing key \"attention.kind\""},
      {"RfaFeaturesZero",
       "rfa",
       {},
       {{"attention.features", 0}},
       "attention.features must be > 0, got 0"},
      {"RfaBadLayout",
       "rfa",
       {},
       {{"attention.layout", "zigzag"}},
       "attention.layout must be one of"},
      {"RfaEpsZero", "rfa", {}, {{"attention.eps", 0.0}}, "attention.eps must be > 0"},
      {"RfaNormEpsNegative",
       "rfa",
       {},
       {{"attention.norm_eps", -1.0}},
       "attention.norm_eps must be > 0"},
      {"RfaFeatureScaleZero",
       "rfa",
       {},
       {{"attention.feature_scale", 0}},
       "attention.feature_scale must not be 0"},
      {"RfaGateNotBool",
       "rfa",
       {},
       {{"attention.gate", 1}},
       "attention.gate must be true or false"},
      {"RfaMissingLayout", "rfa", {"attention.layout"}, {}, "missing key \"attention.layout\""},
      {"LunaLengthZero",
       "luna",
       {},
       {{"attention.length", 0}},
       "attention.length must be > 0, got 0"},
      {"LunaBadActivation",
       "luna",
       {},
       {{"attention.activation", "relu"}},
       "attention.activation must be one of"},
      {"LunaTieNotBool",
       "luna",
       {},
       {{"attention.tie_kv", nullptr}},
       "attention.tie_kv must be true or false, got null"},
      {"SoftmaxContextZero",
       "softmax",
       {},
       {{"attention.max_context", 0}},
       "attention.max_context must be > 0, got 0"},
      {"SoftmaxWithSlots",
       "softmax",
       {},
       {{"attention.slots", 4}},
       "unknown key \"attention.slots\""},
  };
}

void PrintTo(const Refusal& refusal, std::ostream* out) { *out << refusal.name; }

class ModelConfigRefusalTest : public ::testing::TestWithParam<Refusal> {};

TEST_P(ModelConfigRefusalTest, RefusesAndNamesTheKey) {
  const Refusal& refusal = GetParam();
  nlohmann::json json = SmallConfig(refusal.kind);
  for (const std::string& path : refusal.erase) ErasePath(json, path);
  for (const auto& [path, value] : refusal.set) SetPath(json, path, value);
  auto config = ParseModelConfig(json.dump());
  ASSERT_FALSE(config.ok()) << "accepted: " << json.dump();
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(config.status().message().find(refusal.expected), std::string::npos)
      << "message: " << config.status().message() << "\nexpected to contain: " << refusal.expected;
  EXPECT_EQ(config.status().message().rfind("config.json: ", 0), 0u) << config.status().message();
}

INSTANTIATE_TEST_SUITE_P(Table, ModelConfigRefusalTest, ::testing::ValuesIn(Refusals()),
                         [](const auto& info) { return info.param.name; });

// Text-level refusals: what never becomes a JSON object.
struct TextRefusal {
  std::string name;
  std::string text;
  std::string expected;
};

void PrintTo(const TextRefusal& refusal, std::ostream* out) { *out << refusal.name; }

class ModelConfigTextRefusalTest : public ::testing::TestWithParam<TextRefusal> {};

TEST_P(ModelConfigTextRefusalTest, Refuses) {
  auto config = ParseModelConfig(GetParam().text);
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find(GetParam().expected), std::string::npos)
      << config.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Table, ModelConfigTextRefusalTest,
    ::testing::Values(TextRefusal{"Empty", "", "config.json: not valid JSON"},
                      TextRefusal{"BadJson", "{\"format\": ", "config.json: not valid JSON"},
                      TextRefusal{"Array", "[1, 2]", "config.json: must hold one JSON object"},
                      TextRefusal{"NotUtf8", "{\"format\": \"slot\xff\"}",
                                  "config.json: not valid UTF-8"},
                      TextRefusal{"OverlongUtf8", "{\"format\": \"\xc0\xaf\"}", "not valid UTF-8"},
                      TextRefusal{"RepeatedKey", "{\"vocab_size\": 8, \"vocab_size\": 9}",
                                  "key \"vocab_size\" appears more than once"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace slotserve::models
