// The weights check: exactly the tensors docs/MODEL_FORMAT.md lists for the config, by name and
// shape, per attention kind and option; and LanguageModel::Load refusing broken model directories.
#include "models/model_weights.h"

#include <algorithm>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "models/language_model.h"
#include "tests/unit/models/test_model_dir.h"

namespace slotserve::models {
namespace {

using testing::ExpectedTensorSpecs;
using testing::SetPath;
using testing::SmallConfig;
using testing::TempDir;
using testing::TensorSpec;

std::set<std::string> ExpectedNames(const nlohmann::json& json) {
  auto config = ParseModelConfig(json.dump());
  EXPECT_TRUE(config.ok()) << config.status();
  std::set<std::string> names;
  for (const ExpectedTensor& tensor : ExpectedTensors(*config)) names.insert(tensor.name);
  return names;
}

TEST(ExpectedTensorsTest, AbcListsSlotProjectionAndNoLmHeadWhenTied) {
  const std::set<std::string> names = ExpectedNames(SmallConfig("abc"));
  EXPECT_TRUE(names.contains("tok_embed.weight"));
  EXPECT_TRUE(names.contains("layers.1.attn.slot_proj.weight"));
  EXPECT_TRUE(names.contains("layers.1.attn.v_proj.bias"));
  EXPECT_TRUE(names.contains("layers.0.ffn.down.bias"));
  EXPECT_TRUE(names.contains("final_norm.bias"));
  EXPECT_FALSE(names.contains("lm_head.weight"));
  // 1 embedding + 2 layers x (2 norms x 2 + 5 linears x 2 + 2 ffn x 2) + final norm 2.
  EXPECT_EQ(names.size(), 1u + 2u * (4u + 10u + 4u) + 2u);
}

TEST(ExpectedTensorsTest, OptionsChangeTheTensorSet) {
  nlohmann::json untied = SmallConfig("abc");
  SetPath(untied, "tie_embeddings", false);
  EXPECT_TRUE(ExpectedNames(untied).contains("lm_head.weight"));

  nlohmann::json rfa = SmallConfig("rfa");
  EXPECT_TRUE(ExpectedNames(rfa).contains("layers.0.attn.gate_proj.weight"));
  EXPECT_TRUE(ExpectedNames(rfa).contains("layers.0.attn.rfa_random"));
  EXPECT_TRUE(ExpectedNames(rfa).contains("layers.0.attn.rfa_sigma"));
  SetPath(rfa, "attention.gate", false);
  EXPECT_FALSE(ExpectedNames(rfa).contains("layers.0.attn.gate_proj.weight"));

  nlohmann::json luna = SmallConfig("luna");  // tie_kv
  EXPECT_FALSE(ExpectedNames(luna).contains("layers.0.attn.v_proj.weight"));
  EXPECT_TRUE(ExpectedNames(luna).contains("layers.0.attn.luna_p"));
  EXPECT_TRUE(ExpectedNames(luna).contains("layers.0.attn.pq_proj.bias"));
  EXPECT_TRUE(ExpectedNames(luna).contains("layers.0.attn.pc_proj.weight"));
  SetPath(luna, "attention.tie_kv", false);
  EXPECT_TRUE(ExpectedNames(luna).contains("layers.0.attn.v_proj.weight"));

  const std::set<std::string> softmax = ExpectedNames(SmallConfig("softmax"));
  EXPECT_FALSE(std::any_of(softmax.begin(), softmax.end(), [](const std::string& name) {
    return name.find("slot_proj") != std::string::npos;
  }));
}

TEST(ExpectedTensorsTest, ShapesFollowTheConfig) {
  auto config = ParseModelConfig(SmallConfig("rfa").dump());
  ASSERT_TRUE(config.ok());
  for (const ExpectedTensor& tensor : ExpectedTensors(*config)) {
    if (tensor.name == "layers.0.attn.rfa_random") {
      EXPECT_EQ(tensor.shape, (std::vector<int64_t>{4, 4, 4}));  // [H, D, d]
    } else if (tensor.name == "layers.0.attn.gate_proj.weight") {
      EXPECT_EQ(tensor.shape, (std::vector<int64_t>{4, 16}));  // [H, E]
    } else if (tensor.name == "layers.0.ffn.up.weight") {
      EXPECT_EQ(tensor.shape, (std::vector<int64_t>{24, 16}));  // [F, E]
    } else if (tensor.name == "tok_embed.weight") {
      EXPECT_EQ(tensor.shape, (std::vector<int64_t>{40, 16}));  // [V, E]
    }
  }
}

// A model directory whose tensors are the expected ones after `edit`, and the weights check
// of it.
class WeightsCheckTest : public ::testing::Test {
 protected:
  absl::Status Check(const nlohmann::json& config, std::vector<TensorSpec> tensors) {
    testing::WriteModelDir(dir_.path(), config, tensors);
    auto parsed = ParseModelConfig(config.dump());
    if (!parsed.ok()) return parsed.status();
    auto file = SafetensorsFile::Open(dir_.path() / "model.safetensors");
    if (!file.ok()) return file.status();
    return CheckWeights(*parsed, **file);
  }
  static std::vector<TensorSpec> Without(std::vector<TensorSpec> tensors, const std::string& name) {
    std::erase_if(tensors, [&](const TensorSpec& t) { return t.name == name; });
    return tensors;
  }
  static void ExpectMessage(const absl::Status& status, const std::string& expected) {
    ASSERT_FALSE(status.ok()) << "accepted; expected: " << expected;
    EXPECT_NE(status.message().find(expected), std::string::npos)
        << "message: " << status.message() << "\nexpected to contain: " << expected;
  }

  TempDir dir_;
};

TEST_F(WeightsCheckTest, AcceptsExactlyTheExpectedTensorsOfEveryKind) {
  for (const char* kind : {"abc", "rfa", "luna", "softmax"}) {
    const nlohmann::json config = SmallConfig(kind);
    EXPECT_TRUE(Check(config, ExpectedTensorSpecs(config)).ok()) << kind;
  }
}

TEST_F(WeightsCheckTest, AcceptsF16AndBf16Tensors) {
  const nlohmann::json config = SmallConfig("abc");
  std::vector<TensorSpec> tensors = ExpectedTensorSpecs(config);
  for (size_t i = 0; i < tensors.size(); ++i) tensors[i].dtype = i % 2 ? "F16" : "BF16";
  const absl::Status status = Check(config, tensors);
  EXPECT_TRUE(status.ok()) << status;
}

TEST_F(WeightsCheckTest, RefusesAMissingTensorByName) {
  const nlohmann::json config = SmallConfig("abc");
  ExpectMessage(Check(config, Without(ExpectedTensorSpecs(config), "layers.1.attn.q_proj.weight")),
                "model.safetensors: missing tensor layers.1.attn.q_proj.weight (expected shape "
                "[16, 16])");
}

TEST_F(WeightsCheckTest, RefusesAMisShapedTensorByName) {
  const nlohmann::json config = SmallConfig("abc");
  std::vector<TensorSpec> tensors = ExpectedTensorSpecs(config);
  for (TensorSpec& tensor : tensors) {
    if (tensor.name == "layers.1.attn.q_proj.weight") tensor.shape = {16, 8};
  }
  ExpectMessage(Check(config, tensors),
                "model.safetensors: tensor layers.1.attn.q_proj.weight has shape [16, 8], "
                "expected [16, 16]");
  for (TensorSpec& tensor : tensors) {
    if (tensor.name == "layers.1.attn.q_proj.weight") tensor.shape = {16, 16, 1};
  }
  ExpectMessage(Check(config, tensors), "has shape [16, 16, 1], expected [16, 16]");
}

TEST_F(WeightsCheckTest, RefusesAnExtraTensorByName) {
  const nlohmann::json config = SmallConfig("abc");
  std::vector<TensorSpec> tensors = ExpectedTensorSpecs(config);
  tensors.push_back({"layers.0.attn.extra", "F32", {4}});
  ExpectMessage(Check(config, tensors), "unexpected tensor layers.0.attn.extra");
}

TEST_F(WeightsCheckTest, RefusesTensorsOfOtherOptions) {
  // v_proj in a tie_kv Luna model.
  nlohmann::json luna = SmallConfig("luna");
  std::vector<TensorSpec> tensors = ExpectedTensorSpecs(luna);
  tensors.push_back({"layers.0.attn.v_proj.weight", "F32", {16, 16}});
  ExpectMessage(Check(luna, tensors), "unexpected tensor layers.0.attn.v_proj.weight");

  // gate_proj in an ungated RFA model.
  nlohmann::json rfa = SmallConfig("rfa");
  std::vector<TensorSpec> gated = ExpectedTensorSpecs(rfa);
  SetPath(rfa, "attention.gate", false);
  ExpectMessage(Check(rfa, gated), "unexpected tensor layers.0.attn.gate_proj.bias");

  // lm_head with tied embeddings, and none without.
  nlohmann::json abc = SmallConfig("abc");
  std::vector<TensorSpec> with_head = ExpectedTensorSpecs(abc);
  with_head.push_back({"lm_head.weight", "F32", {40, 16}});
  ExpectMessage(Check(abc, with_head), "unexpected tensor lm_head.weight");
  SetPath(abc, "tie_embeddings", false);
  ExpectMessage(Check(abc, Without(with_head, "lm_head.weight")), "missing tensor lm_head.weight");
}

TEST_F(WeightsCheckTest, RefusesAnUnsupportedDtypeByName) {
  const nlohmann::json config = SmallConfig("softmax");
  std::vector<TensorSpec> tensors = ExpectedTensorSpecs(config);
  tensors[3].dtype = "I32";
  ExpectMessage(Check(config, tensors),
                "tensor " + tensors[3].name + " has dtype \"I32\", expected F32, F16, BF16 or I8");
}

// The whole loading path, as the server and slotserve-generate see it.
class LoadRefusalTest : public ::testing::Test {
 protected:
  void ExpectLoadRefused(const std::string& expected) {
    auto model = LanguageModel::Load(dir_.path(), kernels::Backend::kReference);
    ASSERT_FALSE(model.ok()) << "loaded; expected: " << expected;
    EXPECT_NE(model.status().message().find(expected), std::string::npos)
        << "message: " << model.status().message() << "\nexpected to contain: " << expected;
  }
  TempDir dir_;
};

TEST_F(LoadRefusalTest, RefusesAMissingDirectory) {
  auto model = LanguageModel::Load(dir_.path() / "nope", kernels::Backend::kReference);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(model.status().message().find("not a model directory"), std::string::npos);
}

TEST_F(LoadRefusalTest, RefusesAMissingConfig) { ExpectLoadRefused("config.json: no such file"); }

TEST_F(LoadRefusalTest, RefusesAMissingWeightsFile) {
  testing::WriteFile(dir_.path() / "config.json", SmallConfig("abc").dump());
  ExpectLoadRefused("model.safetensors: no such file");
}

TEST_F(LoadRefusalTest, RefusesABadConfigBeforeReadingWeights) {
  nlohmann::json config = SmallConfig("abc");
  testing::WriteModelDir(dir_.path(), config);
  SetPath(config, "attention.slots", 0);
  testing::WriteFile(dir_.path() / "config.json", config.dump());
  ExpectLoadRefused("config.json: attention.slots must be > 0, got 0");
}

TEST_F(LoadRefusalTest, RefusesWeightsThatDoNotMatchTheConfig) {
  nlohmann::json config = SmallConfig("abc");
  testing::WriteModelDir(dir_.path(), config);
  SetPath(config, "attention.slots", 5);  // slot_proj is now [20, 16]
  testing::WriteFile(dir_.path() / "config.json", config.dump());
  ExpectLoadRefused("tensor layers.0.attn.slot_proj.weight has shape [16, 16], expected [20, 16]");
}

TEST_F(LoadRefusalTest, RefusesCudaWhenItCannotRun) {
  if (kernels::CudaDeviceAvailable()) GTEST_SKIP() << "a GPU is present";
  testing::WriteModelDir(dir_.path(), SmallConfig("abc"));
  auto model = LanguageModel::Load(dir_.path(), kernels::Backend::kCuda);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(model.status().message().find("backend cuda"), std::string::npos);
}

TEST_F(LoadRefusalTest, LoadsAValidDirectoryOnEveryHostBackend) {
  for (const char* kind : {"abc", "rfa", "luna", "softmax"}) {
    testing::WriteModelDir(dir_.path(), SmallConfig(kind));
    for (kernels::Backend backend : {kernels::Backend::kReference, kernels::Backend::kCpu}) {
      auto model = LanguageModel::Load(dir_.path(), backend);
      ASSERT_TRUE(model.ok()) << kind << ": " << model.status();
      EXPECT_EQ((*model)->backend(), backend);
      EXPECT_EQ(AttentionKindName((*model)->config().attention.kind), std::string(kind));
    }
  }
}

}  // namespace
}  // namespace slotserve::models
