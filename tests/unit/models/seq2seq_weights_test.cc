// The encoder–decoder tensor table (docs/ARCHITECTURE.md "Encoder–decoder models") against the
// PyTorch reference's golden model files: every variant's file holds exactly the tables's tensors,
// and a file with one tensor missing, mis-shaped or extra is refused naming it.
#include "models/seq2seq_weights.h"

#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/finite_weights.h"
#include "models/language_model.h"
#include "tests/unit/models/test_model_dir.h"

namespace slotserve::models {
namespace {

using testing::TempDir;
using testing::TensorSpec;

const std::filesystem::path kGoldenDir = SLOTSERVE_GOLDEN_SEQ2SEQ_DIR;

std::vector<std::string> Variants() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(kGoldenDir)) {
    names.push_back(entry.path().filename().string());
  }
  return names;
}

TEST(Seq2seqWeightsTest, EveryGoldenVariantHoldsExactlyTheTable) {
  const std::vector<std::string> variants = Variants();
  ASSERT_EQ(variants.size(), 17u);  // 12 kinds' variants and five of them int8
  for (const std::string& variant : variants) {
    auto config = LoadSeq2seqConfig(kGoldenDir / variant / "config.json");
    ASSERT_TRUE(config.ok()) << config.status();
    auto file = SafetensorsFile::Open(kGoldenDir / variant / "model.safetensors");
    ASSERT_TRUE(file.ok()) << file.status();
    EXPECT_TRUE(CheckSeq2seqWeights(*config, **file).ok())
        << variant << ": " << CheckSeq2seqWeights(*config, **file);
    EXPECT_TRUE(CheckWeightsAreFinite(**file).ok()) << variant;
    // An int8 matrix's `_scale` is part of its matrix, not a tensor of the table.
    size_t tensors = 0, int8_matrices = 0;
    for (const auto& [name, tensor] : (*file)->tensors()) {
      tensors += tensor.is_row_scale ? 0 : 1;
      int8_matrices += tensor.dtype == kernels::DType::kI8 ? 1 : 0;
    }
    EXPECT_EQ(ExpectedSeq2seqTensors(*config).size(), tensors) << variant;
    EXPECT_EQ(int8_matrices > 0, variant.ends_with("_int8")) << variant;
  }
}

// The golden variant's tensors (names and shapes as the reference wrote them), edited, written
// to a fresh file and checked against the variant's config.
class Seq2seqWeightsRefusalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::filesystem::path variant = kGoldenDir / "convluna_conv_abc";
    auto config = LoadSeq2seqConfig(variant / "config.json");
    ASSERT_TRUE(config.ok()) << config.status();
    config_ = *config;
    auto file = SafetensorsFile::Open(variant / "model.safetensors");
    ASSERT_TRUE(file.ok()) << file.status();
    for (const auto& [name, tensor] : (*file)->tensors()) {
      golden_.push_back({.name = name, .shape = tensor.shape});
    }
  }

  std::string Refusal(const std::vector<TensorSpec>& tensors) {
    const std::filesystem::path path = dir_.path() / "model.safetensors";
    testing::WriteFile(path, testing::SafetensorsBytes(tensors));
    auto file = SafetensorsFile::Open(path);
    EXPECT_TRUE(file.ok()) << file.status();
    if (!file.ok()) return "";
    const absl::Status status = CheckSeq2seqWeights(config_, **file);
    EXPECT_FALSE(status.ok());
    return std::string(status.message());
  }

  Seq2seqConfig config_;
  std::vector<TensorSpec> golden_;
  TempDir dir_;
};

TEST_F(Seq2seqWeightsRefusalTest, RefusesAMissingCrossTensorByName) {
  std::vector<TensorSpec> tensors = golden_;
  std::erase_if(tensors,
                [](const TensorSpec& t) { return t.name == "decoder.layers.1.cross.filter.bias"; });
  EXPECT_NE(Refusal(tensors).find("missing tensor decoder.layers.1.cross.filter.bias (expected "
                                  "shape [1])"),
            std::string::npos);
}

TEST_F(Seq2seqWeightsRefusalTest, RefusesAMisShapedTensorByName) {
  std::vector<TensorSpec> tensors = golden_;
  for (TensorSpec& tensor : tensors) {
    if (tensor.name == "decoder.layers.0.cross.luna_p") tensor.shape = {5, 16};
  }
  EXPECT_NE(Refusal(tensors).find(
                "tensor decoder.layers.0.cross.luna_p has shape [5, 16], expected [4, 16]"),
            std::string::npos);
}

TEST_F(Seq2seqWeightsRefusalTest, RefusesAnExtraTensorByName) {
  std::vector<TensorSpec> tensors = golden_;
  tensors.push_back({.name = "encoder.layers.0.cross_norm.weight", .shape = {16}});
  EXPECT_NE(Refusal(tensors).find("unexpected tensor encoder.layers.0.cross_norm.weight: an "
                                  "encoder-decoder model with abc self-attention and luna cross "
                                  "attention with this config.json has no such tensor"),
            std::string::npos);
}

// LanguageModel::Load recognises the format, loads a good directory as an encoder-decoder model
// and checks a broken one as strictly as a decoder-only one.
TEST_F(Seq2seqWeightsRefusalTest, LoadServesAGoodDirectoryAndRefusesABrokenOne) {
  auto golden = LanguageModel::Load(kGoldenDir / "convluna_conv_abc", kernels::Backend::kCpu);
  ASSERT_TRUE(golden.ok()) << golden.status();
  ASSERT_NE((*golden)->seq2seq(), nullptr);
  EXPECT_EQ((*golden)->seq2seq()->cross_kind, "luna");

  std::filesystem::copy_file(kGoldenDir / "convluna_conv_abc" / "config.json",
                             dir_.path() / "config.json");
  std::vector<TensorSpec> tensors = golden_;
  std::erase_if(tensors, [](const TensorSpec& t) { return t.name == "encoder.final_norm.bias"; });
  testing::WriteFile(dir_.path() / "model.safetensors", testing::SafetensorsBytes(tensors));
  auto broken = LanguageModel::Load(dir_.path(), kernels::Backend::kCpu);
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(broken.status().message().find("missing tensor encoder.final_norm.bias"),
            std::string::npos)
      << broken.status();
}

}  // namespace
}  // namespace slotserve::models
