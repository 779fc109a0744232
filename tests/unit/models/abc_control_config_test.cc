// abc's memory controls in config.json (docs/ABC_CONTROLS.md): each parses into its fields,
// changes the tensors a layer has, bounds the context where the paper's control does, and
// keeps the learned control's state bytes; every misuse of the new keys is refused with a
// message naming the key. A linformer model refuses a prompt past its columns.
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/attention_kind.h"
#include "models/language_model.h"
#include "models/model_config.h"
#include "tests/unit/models/test_model_dir.h"

namespace slotserve::models {
namespace {

using testing::SetPath;
using testing::SmallConfig;

nlohmann::json ControlConfig(const nlohmann::json& options) {
  nlohmann::json json = SmallConfig("abc");
  for (const auto& [key, value] : options.items()) SetPath(json, "attention." + key, value);
  return json;
}

ModelConfig Parse(const nlohmann::json& json) {
  auto config = ParseModelConfig(json.dump());
  EXPECT_TRUE(config.ok()) << config.status() << "\n" << json.dump();
  return config.ok() ? *config : ModelConfig{};
}

std::vector<std::string> TensorNames(const ModelConfig& config) {
  std::vector<std::string> names;
  for (const AttentionTensor& tensor : AttentionLayerTensors(config)) names.push_back(tensor.name);
  return names;
}

bool Has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(AbcControlConfigTest, NoControlKeyIsTheLearnedExpControl) {
  const ModelConfig config = Parse(SmallConfig("abc"));
  EXPECT_EQ(config.attention.control, MemoryControl::kLearnedExp);
  EXPECT_EQ(AttentionContextLimit(config.attention), 0);
  EXPECT_EQ(DescribeAttention(config.attention), "abc, 4 slots");
  EXPECT_TRUE(Has(TensorNames(config), "slot_proj.weight"));
}

TEST(AbcControlConfigTest, EachControlParsesIntoItsFields) {
  struct Case {
    nlohmann::json options;
    MemoryControl control;
    int64_t context_limit;
    std::string description;
    bool slot_proj;
  };
  const std::vector<Case> cases = {
      {{{"control", "learned"}, {"activation", "relu"}},
       MemoryControl::kLearnedRelu,
       0,
       "abc, 4 slots, learned relu control",
       true},
      {{{"activation", "sigmoid"}},
       MemoryControl::kLearnedSigmoid,
       0,
       "abc, 4 slots, learned sigmoid control",
       true},
      {{{"control", "window"}}, MemoryControl::kWindow, 0, "abc, 4 slots, window control", false},
      {{{"control", "linformer"}, {"max_positions", 48}},
       MemoryControl::kLinformer,
       48,
       "abc, 4 slots, linformer control over 48 positions",
       false},
      {{{"control", "compressive"}, {"stride", 5}},
       MemoryControl::kCompressive,
       20,
       "abc, 4 slots, compressive control with stride 5",
       false},
      {{{"control", "random"}, {"seed", 9007199254740993LL}},
       MemoryControl::kRandom,
       0,
       "abc, 4 slots, random control (seed 9007199254740993)",
       false},
  };
  const int64_t learned_bytes = StateBytesPerRequest(Parse(SmallConfig("abc")));
  for (const Case& c : cases) {
    SCOPED_TRACE(c.options.dump());
    const ModelConfig config = Parse(ControlConfig(c.options));
    EXPECT_EQ(config.attention.control, c.control);
    EXPECT_EQ(AttentionContextLimit(config.attention), c.context_limit);
    EXPECT_EQ(DescribeAttention(config.attention), c.description);
    EXPECT_EQ(Has(TensorNames(config), "slot_proj.weight"), c.slot_proj);
    EXPECT_EQ(Has(TensorNames(config), "linformer_proj"), c.control == MemoryControl::kLinformer);
    // The same slot for every control: the comparison of controls is at equal state bytes.
    EXPECT_EQ(StateBytesPerRequest(config), learned_bytes);
  }
  const ModelConfig random = Parse(ControlConfig({{"control", "random"}, {"seed", 3}}));
  EXPECT_EQ(random.attention.seed, 3u);
  const ModelConfig linformer =
      Parse(ControlConfig({{"control", "linformer"}, {"max_positions", 48}}));
  for (const AttentionTensor& tensor : AttentionLayerTensors(linformer)) {
    if (tensor.name == "linformer_proj") {
      EXPECT_EQ(tensor.shape, (std::vector<int64_t>{4, 4, 48}));  // [H, M, N]
    }
  }
}

TEST(AbcControlConfigTest, MisusedControlKeysAreRefusedByName) {
  const std::vector<std::pair<nlohmann::json, std::string>> refusals = {
      {{{"control", "fifo"}},
       "attention.control must be one of \"learned\", \"window\", \"linformer\", "
       "\"compressive\", \"random\", got \"fifo\""},
      {{{"activation", "tanh"}}, "attention.activation must be one of"},
      {{{"control", "window"}, {"activation", "relu"}},
       "attention.activation is only for control \"learned\", not \"window\""},
      {{{"control", "linformer"}}, "missing key \"attention.max_positions\""},
      {{{"control", "linformer"}, {"max_positions", 0}},
       "attention.max_positions must be > 0, got 0"},
      {{{"control", "compressive"}}, "missing key \"attention.stride\""},
      {{{"control", "compressive"}, {"stride", -2}}, "attention.stride must be > 0, got -2"},
      {{{"control", "random"}}, "missing key \"attention.seed\""},
      {{{"control", "random"}, {"seed", -1}}, "attention.seed must be >= 0, got -1"},
      {{{"control", "window"}, {"stride", 4}},
       "attention.stride is only for control \"compressive\", not \"window\""},
      {{{"seed", 4}}, "attention.seed is only for control \"random\", not \"learned\""},
      {{{"control", "compressive"}, {"stride", 2}, {"max_positions", 8}},
       "attention.max_positions is only for control \"linformer\", not \"compressive\""},
  };
  for (const auto& [options, expected] : refusals) {
    const nlohmann::json json = ControlConfig(options);
    auto config = ParseModelConfig(json.dump());
    ASSERT_FALSE(config.ok()) << "accepted: " << json.dump();
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(config.status().message().find(expected), std::string::npos)
        << "message: " << config.status().message() << "\nexpected: " << expected;
  }
}

TEST(AbcControlConfigTest, ALinformerModelRefusesPositionsPastItsColumns) {
  testing::TempDir dir;
  const nlohmann::json json = ControlConfig({{"control", "linformer"}, {"max_positions", 6}});
  testing::WriteModelDir(dir.path(), json);
  auto model = LanguageModel::Load(dir.path(), kernels::Backend::kCpu);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->max_positions(), 6);
  auto states = (*model)->AllocateStates(1);
  ASSERT_TRUE(states.ok()) << states.status();
  const std::vector<int32_t> four = {1, 5, 6, 7};
  std::vector<float> logits(40);
  ASSERT_TRUE((*model)
                  ->Prefill(**states, 0, four, LogitsWanted::kLastToken, std::span<float>(logits))
                  .ok());
  const absl::Status refused =
      (*model)->Prefill(**states, 0, four, LogitsWanted::kLastToken, std::span<float>(logits));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("this model holds at most 6 positions per request"),
            std::string::npos)
      << refused.message();
}

}  // namespace
}  // namespace slotserve::models
