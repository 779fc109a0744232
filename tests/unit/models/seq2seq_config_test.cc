// The encoder–decoder config.json (docs/ARCHITECTURE.md "Encoder–decoder models"): every golden
// variant's config parses into the fields it names, and every way of getting a key wrong is refused
// with a message naming it.
#include "models/seq2seq_config.h"

#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/unit/models/test_model_dir.h"

namespace slotserve::models {
namespace {

using testing::ErasePath;
using testing::SetPath;

// A small valid seq2seq config with the given cross attention object: the decoder-only
// SmallConfig's shared keys (vocab 40, d_model 16, 4 heads), a 1-layer encoder and a 2-layer
// abc decoder.
nlohmann::json SmallSeq2seqConfig(const nlohmann::json& cross) {
  nlohmann::json config = testing::SmallConfig("abc");
  config["format"] = "slotserve-seq2seq";
  config["decoder"] = {{"n_layers", 2}, {"attention", config["attention"]}};
  config.erase("n_layers");
  config.erase("attention");
  config["decoder_start_id"] = 3;
  config["encoder"] = {{"n_layers", 1}, {"max_source_tokens", 32}};
  config["cross_attention"] = cross;
  return config;
}

nlohmann::json LunaCross() {
  return {{"kind", "luna"},
          {"length", 4},
          {"temperature", 0.5},
          {"filter", {{"op", "maxpool"}, {"kernel", 3}, {"stride", 2}}}};
}

std::string ErrorOf(const nlohmann::json& config) {
  auto parsed = ParseSeq2seqConfig(config.dump());
  EXPECT_FALSE(parsed.ok()) << config.dump();
  if (parsed.ok()) return "";
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(parsed.status().message());
}

TEST(Seq2seqConfigTest, ParsesTheSharedKeysEncoderAndDecoder) {
  auto config = ParseSeq2seqConfig(SmallSeq2seqConfig({{"kind", "softmax"}}).dump());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->decoder.vocab_size, 40);
  EXPECT_EQ(config->decoder.d_model, 16);
  EXPECT_EQ(config->decoder.n_heads, 4);
  EXPECT_EQ(config->decoder.n_layers, 2);
  EXPECT_EQ(config->decoder.attention.kind, AttentionKind::kAbc);
  EXPECT_EQ(config->decoder.attention.memory_rows, 4);
  EXPECT_FLOAT_EQ(config->decoder.embed_scale, 4.0f);
  EXPECT_EQ(config->decoder_start_id, 3);
  EXPECT_EQ(config->encoder_layers, 1);
  EXPECT_EQ(config->max_source_tokens, 32);
  EXPECT_EQ(config->cross.kind, CrossAttentionKind::kSoftmax);
  const ModelConfig encoder = config->EncoderView();
  EXPECT_EQ(encoder.n_layers, 1);
  EXPECT_EQ(encoder.attention.kind, AttentionKind::kSoftmax);
  EXPECT_EQ(encoder.attention.max_context, 32);
  EXPECT_EQ(encoder.d_model, 16);
}

TEST(Seq2seqConfigTest, ParsesEveryCrossKind) {
  auto abc = ParseSeq2seqConfig(SmallSeq2seqConfig({{"kind", "abc"}, {"slots", 5}}).dump());
  ASSERT_TRUE(abc.ok()) << abc.status();
  EXPECT_EQ(abc->cross.kind, CrossAttentionKind::kAbc);
  EXPECT_EQ(abc->cross.memory_rows, 5);

  auto rfa = ParseSeq2seqConfig(SmallSeq2seqConfig({{"kind", "rfa"},
                                                    {"features", 6},
                                                    {"feature_scale", 0.5},
                                                    {"eps", 0.25},
                                                    {"norm_eps", 1e-3},
                                                    {"layout", "interleave"}})
                                    .dump());
  ASSERT_TRUE(rfa.ok()) << rfa.status();
  EXPECT_EQ(rfa->cross.kind, CrossAttentionKind::kRfa);
  EXPECT_EQ(rfa->cross.features, 6);
  EXPECT_FLOAT_EQ(rfa->cross.feature_scale, 0.5f);
  EXPECT_FLOAT_EQ(rfa->cross.eps, 0.25f);
  EXPECT_TRUE(rfa->cross.interleave);

  auto luna = ParseSeq2seqConfig(SmallSeq2seqConfig(LunaCross()).dump());
  ASSERT_TRUE(luna.ok()) << luna.status();
  EXPECT_EQ(luna->cross.kind, CrossAttentionKind::kLuna);
  EXPECT_EQ(luna->cross.length, 4);
  EXPECT_FLOAT_EQ(luna->cross.temperature, 0.5f);
  EXPECT_TRUE(luna->cross.has_filter);
  EXPECT_TRUE(luna->cross.filter.maxpool);
  EXPECT_EQ(luna->cross.filter.kernel, 3);
  EXPECT_EQ(luna->cross.filter.stride, 2);

  nlohmann::json unfiltered = LunaCross();
  unfiltered["filter"] = nullptr;
  auto plain = ParseSeq2seqConfig(SmallSeq2seqConfig(unfiltered).dump());
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(plain->cross.has_filter);

  auto srformer = ParseSeq2seqConfig(
      SmallSeq2seqConfig({{"kind", "srformer"}, {"segment", 8}, {"target_length", 20}}).dump());
  ASSERT_TRUE(srformer.ok()) << srformer.status();
  EXPECT_EQ(srformer->cross.kind, CrossAttentionKind::kSrformer);
  EXPECT_EQ(srformer->cross.segment, 8);
  EXPECT_EQ(srformer->cross.target_length, 20);
}

TEST(Seq2seqConfigTest, ParsesEveryGoldenVariantsConfig) {
  int parsed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(SLOTSERVE_GOLDEN_SEQ2SEQ_DIR)) {
    auto config = LoadSeq2seqConfig(entry.path() / "config.json");
    EXPECT_TRUE(config.ok()) << entry.path() << ": " << config.status();
    ++parsed;
  }
  EXPECT_EQ(parsed, 17);  // 12 kinds' variants and five of them int8
}

TEST(Seq2seqConfigTest, RefusesTheDecoderOnlyFormatAndViceVersa) {
  nlohmann::json config = SmallSeq2seqConfig({{"kind", "softmax"}});
  config["format"] = "slotserve-lm";
  EXPECT_EQ(ErrorOf(config),
            "config.json: format must be \"slotserve-seq2seq\", got \"slotserve-lm\"");
  config["format"] = "slotserve-seq2seq";
  config["format_version"] = 2;
  EXPECT_NE(ErrorOf(config).find("format_version must be 1"), std::string::npos);
}

TEST(Seq2seqConfigTest, RefusesUnknownKeysNamingThem) {
  const nlohmann::json valid = SmallSeq2seqConfig(LunaCross());
  const std::pair<std::string, std::string> cases[] = {
      {"n_layers", "unknown key \"n_layers\""},
      {"attention", "unknown key \"attention\""},
      {"encoder.n_heads", "unknown key \"encoder.n_heads\""},
      {"decoder.max_source_tokens", "unknown key \"decoder.max_source_tokens\""},
      {"decoder.attention.features",
       "unknown key \"decoder.attention.features\" for "
       "decoder.attention.kind \"abc\""},
      {"cross_attention.slots",
       "unknown key \"cross_attention.slots\" for "
       "cross_attention.kind \"luna\""},
      {"cross_attention.filter.size", "unknown key \"cross_attention.filter.size\""},
  };
  for (const auto& [path, message] : cases) {
    nlohmann::json config = valid;
    SetPath(config, path, 1);
    EXPECT_EQ(ErrorOf(config), "config.json: " + message) << path;
  }
}

TEST(Seq2seqConfigTest, RefusesMissingKeysNamingThem) {
  const std::string paths[] = {"decoder_start_id",
                               "encoder",
                               "encoder.max_source_tokens",
                               "decoder.n_layers",
                               "decoder.attention",
                               "cross_attention",
                               "cross_attention.temperature",
                               "cross_attention.filter",
                               "cross_attention.filter.stride"};
  for (const std::string& path : paths) {
    nlohmann::json config = SmallSeq2seqConfig(LunaCross());
    ErasePath(config, path);
    EXPECT_EQ(ErrorOf(config), "config.json: missing key \"" + path + "\"") << path;
  }
}

TEST(Seq2seqConfigTest, RefusesBadValuesNamingTheKey) {
  struct Case {
    nlohmann::json cross;
    std::string path;
    nlohmann::json value;
    std::string message;
  };
  const Case cases[] = {
      {{{"kind", "softmax"}}, "decoder_start_id", 40, "decoder_start_id must be <= 39, got 40"},
      {{{"kind", "softmax"}},
       "encoder.max_source_tokens",
       0,
       "encoder.max_source_tokens must be > 0, got 0"},
      {{{"kind", "softmax"}},
       "encoder.n_layers",
       "2",
       "encoder.n_layers must be an integer, got "
       "\"2\""},
      {{{"kind", "softmax"}},
       "decoder.attention.slots",
       0,
       "decoder.attention.slots must be > 0, got 0"},
      {{{"kind", "softmax"}},
       "cross_attention.kind",
       "srformr",
       "cross_attention.kind must be one of \"softmax\", \"abc\", \"rfa\", \"luna\", "
       "\"srformer\", got \"srformr\""},
      {{{"kind", "abc"}, {"slots", 4}},
       "cross_attention.slots",
       0,
       "cross_attention.slots must be > 0, got 0"},
      {LunaCross(), "cross_attention.temperature", 0,
       "cross_attention.temperature must be > 0, "
       "got 0"},
      {LunaCross(), "cross_attention.filter", 3,
       "cross_attention.filter must be an object or "
       "null, got 3"},
      {LunaCross(), "cross_attention.filter.op", "avgpool",
       "cross_attention.filter.op must be one of \"conv\", \"maxpool\", got \"avgpool\""},
      {LunaCross(), "cross_attention.filter.stride", 0,
       "cross_attention.filter.stride must be > 0, got 0"},
      {{{"kind", "srformer"}, {"segment", 4}, {"target_length", 8}},
       "cross_attention.segment",
       -1,
       "cross_attention.segment must be > 0, got -1"},
      {{{"kind", "srformer"}, {"segment", 4}, {"target_length", 8}},
       "cross_attention.target_length",
       0,
       "cross_attention.target_length must be > 0, got 0"},
  };
  for (const Case& c : cases) {
    nlohmann::json config = SmallSeq2seqConfig(c.cross);
    SetPath(config, c.path, c.value);
    EXPECT_EQ(ErrorOf(config), "config.json: " + c.message) << c.path;
  }
  nlohmann::json rfa = SmallSeq2seqConfig({{"kind", "rfa"},
                                           {"features", 6},
                                           {"feature_scale", 0.5},
                                           {"eps", 0.25},
                                           {"norm_eps", 1e-3},
                                           {"layout", "interleave"}});
  SetPath(rfa, "cross_attention.eps", 0);
  EXPECT_EQ(ErrorOf(rfa), "config.json: cross_attention.eps must be > 0, got 0");
  nlohmann::json gated = rfa;
  SetPath(gated, "cross_attention.gate", true);
  EXPECT_EQ(ErrorOf(gated),
            "config.json: unknown key \"cross_attention.gate\" for cross_attention.kind \"rfa\"");
}

}  // namespace
}  // namespace slotserve::models
