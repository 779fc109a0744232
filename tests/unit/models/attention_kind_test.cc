// The attention kinds' one description (models/attention_kind.h) against what the code does
// with it: every kind has an entry; config.json takes exactly the keys the entry names; the
// state bytes it gives are the bytes the model allocates per request and its kernels fill to
// the last float; the tensors it lists are the ones the loader requires, each refused by name
// when missing; and the strings the server shows are the ones it has always shown.
#include "models/attention_kind.h"

#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "models/abc_controls.h"
#include "models/language_model.h"
#include "models/model_weights.h"
#include "tests/unit/models/test_model_dir.h"

namespace slotserve::models {
namespace {

using testing::ExpectedTensorSpecs;
using testing::SmallConfig;
using testing::TempDir;
using testing::TensorSpec;

constexpr AttentionKind kEveryKind[] = {AttentionKind::kAbc, AttentionKind::kRfa,
                                        AttentionKind::kLuna, AttentionKind::kSoftmax};

TEST(AttentionKindsTest, EveryKindHasOneCompleteDescriptionInEnumOrder) {
  ASSERT_EQ(AttentionKinds().size(), std::size(kEveryKind));
  std::set<std::string> names;
  for (size_t i = 0; i < std::size(kEveryKind); ++i) {
    const AttentionKindDescription& kind = DescribeAttentionKind(kEveryKind[i]);
    EXPECT_EQ(kind.kind, kEveryKind[i]);
    // config.json's "kind" choice is an index into the table.
    EXPECT_EQ(&AttentionKinds()[i], &kind);
    names.insert(kind.name);
    EXPECT_NE(kind.memory_size_key, nullptr) << kind.name;
    EXPECT_NE(kind.memory_size, nullptr) << kind.name;
    EXPECT_GT(kind.max_memory_size, 0) << kind.name;
    EXPECT_NE(std::strstr(kind.memory_phrase, "$0"), nullptr) << kind.name;
    EXPECT_EQ(kind.parse_options == nullptr, kind.option_keys.empty()) << kind.name;
    EXPECT_NE(kind.state_floats_per_layer, nullptr) << kind.name;
    EXPECT_NE(kind.input_projections, nullptr) << kind.name;
    EXPECT_NE(kind.constant_tensors, nullptr) << kind.name;
    EXPECT_GT(kind.flops_per_memory_element, 0) << kind.name;
    EXPECT_NE(kind.create_layer, nullptr) << kind.name;
  }
  EXPECT_EQ(names, (std::set<std::string>{"abc", "rfa", "luna", "softmax"}));
}

ModelConfig Parse(const nlohmann::json& json) {
  auto config = ParseModelConfig(json.dump());
  EXPECT_TRUE(config.ok()) << config.status();
  return config.ok() ? *config : ModelConfig{};
}

// One SmallConfig model per kind (2 layers, H = 4, d = 4; abc M = 4, rfa D = 4, luna L = 3,
// softmax max_context = 12).
class AttentionKindTest : public ::testing::TestWithParam<std::string> {
 protected:
  const nlohmann::json json_ = SmallConfig(GetParam());
  const ModelConfig config_ = Parse(json_);
  const AttentionKindDescription& kind_ = DescribeAttentionKind(config_.attention.kind);
};

TEST_P(AttentionKindTest, ConfigTakesExactlyTheKeysTheDescriptionNames) {
  EXPECT_EQ(kind_.name, GetParam());
  std::set<std::string> keys;
  for (const auto& [key, value] : json_["attention"].items()) keys.insert(key);
  std::set<std::string> described = {"kind", kind_.memory_size_key};
  described.insert(kind_.option_keys.begin(), kind_.option_keys.end());
  // SmallConfig spells out every required key; abc's control keys are optional (the default
  // control takes none; abc_control_config_test.cc covers them).
  if (GetParam() == "abc") {
    for (const std::string& key : AbcOptionKeys()) described.erase(key);
  }
  EXPECT_EQ(keys, described);
  EXPECT_EQ(AttentionMemorySize(config_.attention),
            json_["attention"][kind_.memory_size_key].get<int>());

  nlohmann::json missing = json_;
  missing["attention"].erase(kind_.memory_size_key);
  auto refused = ParseModelConfig(missing.dump());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(
                absl::StrCat("missing key \"attention.", kind_.memory_size_key, "\"")),
            std::string::npos)
      << refused.status();
  nlohmann::json too_big = json_;
  too_big["attention"][kind_.memory_size_key] = kind_.max_memory_size + 1;
  EXPECT_FALSE(ParseModelConfig(too_big.dump()).ok());
}

TEST_P(AttentionKindTest, ShowsTheMemoryAsTheServerAlwaysHas) {
  // The start-up line and GetModelInfo's attention_memory_unit.
  const std::map<std::string, std::pair<std::string, std::string>> shown = {
      {"abc", {"abc, 4 slots", "slots"}},
      {"rfa", {"rfa, 4 random features", "features"}},
      {"luna", {"luna, projected length 3", "length"}},
      {"softmax", {"softmax, KV cache up to 12 tokens", "max_context"}},
  };
  EXPECT_EQ(DescribeAttention(config_.attention), shown.at(GetParam()).first);
  EXPECT_EQ(kind_.memory_size_key, shown.at(GetParam()).second);
}

TEST_P(AttentionKindTest, StateBytesAreWhatTheModelAllocatesPerRequest) {
  TempDir dir;
  testing::WriteModelDir(dir.path(), json_);
  auto model = LanguageModel::Load(dir.path(), kernels::Backend::kReference);
  ASSERT_TRUE(model.ok()) << model.status();
  auto states = (*model)->AllocateStates(3);
  ASSERT_TRUE(states.ok()) << states.status();
  EXPECT_EQ(StateBytesPerRequest(config_), (*model)->state_bytes_per_request());
  EXPECT_EQ(StateBytesPerRequest(config_), (*states)->bytes_per_slot());
  EXPECT_EQ(AttentionStateFloatsPerLayer(config_) * config_.n_layers, (*states)->floats_per_slot());
  if (kind_.memory_is_context) {
    EXPECT_EQ((*model)->max_positions(), AttentionMemorySize(config_.attention));
    // After 5 tokens a KV cache holds 5 rows: K and V, [5, H*d] per layer.
    EXPECT_EQ(StateBytesAtContext(config_, 5), 2 * (2 * 5 * 16) * 4);
  } else {
    EXPECT_EQ(StateBytesAtContext(config_, 5), StateBytesPerRequest(config_));
    EXPECT_EQ(StateBytesAtContext(config_, 1000), StateBytesPerRequest(config_));
  }
}

// One slot's floats, from a snapshot (position first, then the state).
std::vector<float> SlotFloats(const StateArena& states, int slot) {
  std::vector<uint8_t> snapshot;
  EXPECT_TRUE(states.Save(slot, &snapshot).ok());
  std::vector<float> floats((snapshot.size() - sizeof(int32_t)) / sizeof(float));
  std::memcpy(floats.data(), snapshot.data() + sizeof(int32_t), floats.size() * sizeof(float));
  return floats;
}

TEST_P(AttentionKindTest, KernelsFillTheDescribedStateToItsLastFloatAndNoFurther) {
  TempDir dir;
  testing::WriteModelDir(dir.path(), json_);
  for (kernels::Backend backend : {kernels::Backend::kReference, kernels::Backend::kCpu}) {
    auto model = LanguageModel::Load(dir.path(), backend);
    ASSERT_TRUE(model.ok()) << model.status();
    auto states = (*model)->AllocateStates(2);
    ASSERT_TRUE(states.ok()) << states.status();
    // 12 tokens (softmax's whole KV cache): 11 by prefill, the last by a decode step.
    const std::vector<int32_t> prompt = {1, 5, 7, 9, 11, 3, 8, 13, 21, 34, 6};
    std::vector<float> logits((*model)->config().vocab_size);
    ASSERT_TRUE((*model)->Prefill(**states, 0, prompt, LogitsWanted::kLastToken, logits).ok());
    const int32_t slot = 0, token = 4;
    ASSERT_TRUE((*model)->Step(**states, {&slot, 1}, {&token, 1}, logits).ok());

    const std::vector<float> state = SlotFloats(**states, 0);
    const int64_t per_layer = AttentionStateFloatsPerLayer(config_);
    for (int layer = 0; layer < config_.n_layers; ++layer) {
      // The last head's last floats (abc m, rfa z, luna C's last row, softmax V's last row).
      const int64_t end = (layer + 1) * per_layer;
      bool written = false;
      for (int64_t i = end - config_.head_dim(); i < end; ++i) written |= state[i] != 0.0f;
      EXPECT_TRUE(written) << kernels::BackendName(backend) << ": layer " << layer
                           << " leaves the end of its described state unused";
    }
    const std::vector<float> neighbour = SlotFloats(**states, 1);
    EXPECT_EQ(neighbour, std::vector<float>(neighbour.size(), 0.0f))
        << kernels::BackendName(backend) << ": the request wrote past its described state";
  }
}

TEST_P(AttentionKindTest, ListedTensorsAreExactlyTheLayerTensorsTheLoaderRequires) {
  const std::string prefix = AttentionPrefix(1);
  std::map<std::string, std::vector<int64_t>> listed;
  for (const AttentionTensor& tensor : AttentionLayerTensors(config_)) {
    listed[prefix + tensor.name] = tensor.shape;
  }
  std::map<std::string, std::vector<int64_t>> required;
  for (const ExpectedTensor& tensor : ExpectedTensors(config_)) {
    if (tensor.name.starts_with(prefix)) required[tensor.name] = tensor.shape;
  }
  EXPECT_EQ(listed, required);
  // The fused input projections are among them.
  for (const std::string& name : InputProjectionNames(config_)) {
    EXPECT_TRUE(listed.contains(prefix + name + ".weight")) << name;
  }

  TempDir dir;
  const std::vector<TensorSpec> every = ExpectedTensorSpecs(json_);
  for (const auto& [name, shape] : listed) {
    std::vector<TensorSpec> without = every;
    std::erase_if(without, [&](const TensorSpec& tensor) { return tensor.name == name; });
    ASSERT_EQ(without.size() + 1, every.size()) << name;
    testing::WriteModelDir(dir.path(), json_, without);
    auto model = LanguageModel::Load(dir.path(), kernels::Backend::kReference);
    ASSERT_FALSE(model.ok()) << "loaded without " << name;
    EXPECT_NE(model.status().message().find("missing tensor " + name), std::string::npos)
        << model.status();
  }
}

INSTANTIATE_TEST_SUITE_P(EveryKind, AttentionKindTest,
                         ::testing::Values("abc", "rfa", "luna", "softmax"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace slotserve::models
