// int8 weights in a model directory (docs/MODEL_FORMAT.md, "int8 weights"): an I8 matrix and
// its "<name>_scale" F32 [rows] are read back as q * scale, the scale tensor belongs to its
// matrix (not an unexpected tensor of the model), and every malformed pairing is refused with
// a message naming the tensor. A whole model stored int8 loads, keeps its matrices int8 on the
// device, and computes what the same weights dequantised to F32 compute.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/finite_weights.h"
#include "models/language_model.h"
#include "models/safetensors_file.h"
#include "tests/unit/models/test_model_dir.h"

namespace slotserve::models {
namespace {

using testing::RawSafetensorsBytes;
using testing::TempDir;
using testing::WriteFile;

std::string Bytes(const void* data, size_t size) {
  return std::string(static_cast<const char*>(data), size);
}

class Int8SafetensorsTest : public ::testing::Test {
 protected:
  absl::StatusOr<std::unique_ptr<SafetensorsFile>> Open(const std::string& header,
                                                        const std::string& data) {
    const auto path = dir_.path() / "model.safetensors";
    WriteFile(path, RawSafetensorsBytes(header.size(), header, data));
    return SafetensorsFile::Open(path);
  }
  void ExpectRefused(const std::string& header, const std::string& data,
                     const std::string& expected) {
    auto file = Open(header, data);
    ASSERT_FALSE(file.ok()) << "accepted; expected: " << expected;
    EXPECT_NE(file.status().message().find(expected), std::string::npos)
        << "message: " << file.status().message() << "\nexpected to contain: " << expected;
  }
  TempDir dir_;
};

TEST_F(Int8SafetensorsTest, AnI8MatrixReadsBackAsItsIntegersTimesItsRowScales) {
  const int8_t q[6] = {1, -2, 127, -127, 0, 5};  // [2, 3]
  const float scales[2] = {0.5f, 0.125f};
  const std::string data = Bytes(scales, sizeof(scales)) + Bytes(q, sizeof(q));
  const std::string header =
      R"({"w": {"dtype": "I8", "shape": [2, 3], "data_offsets": [8, 14]}, )"
      R"("w_scale": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})";
  auto file = Open(header, data);
  ASSERT_TRUE(file.ok()) << file.status();
  const SafetensorsTensor* w = (*file)->Find("w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->dtype, kernels::DType::kI8);
  EXPECT_EQ(w->ToFloat32(),
            (std::vector<float>{0.5f, -1.0f, 63.5f, -127 * 0.125f, 0.0f, 5 * 0.125f}));
  EXPECT_TRUE((*file)->Find("w_scale")->is_row_scale);
  EXPECT_FALSE(w->is_row_scale);
}

// -128 has no negation in int8, which the int8 x int8 kernels rely on (they negate weights by
// the activations' signs); the format keeps int8 weights in [-127, 127] and the load check
// refuses the one value outside, naming the tensor and the element.
TEST_F(Int8SafetensorsTest, MinusOneTwentyEightIsRefusedByTheWeightCheck) {
  const float scales[2] = {0.5f, 0.125f};
  int8_t q[6] = {1, -2, 127, -127, 0, 5};
  const std::string header =
      R"({"w": {"dtype": "I8", "shape": [2, 3], "data_offsets": [8, 14]}, )"
      R"("w_scale": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})";
  {
    auto file = Open(header, Bytes(scales, sizeof(scales)) + Bytes(q, sizeof(q)));
    ASSERT_TRUE(file.ok()) << file.status();
    EXPECT_TRUE(CheckWeightsAreFinite(**file).ok());
  }
  q[4] = -128;
  auto file = Open(header, Bytes(scales, sizeof(scales)) + Bytes(q, sizeof(q)));
  ASSERT_TRUE(file.ok()) << file.status();
  const absl::Status status = CheckWeightsAreFinite(**file);
  EXPECT_NE(status.message().find("tensor w holds -128 at element 4: int8 weights must lie in "
                                  "[-127, 127]"),
            std::string::npos)
      << status;
}

TEST_F(Int8SafetensorsTest, MalformedPairingsAreRefusedByName) {
  const std::string data(64, '\0');
  ExpectRefused(R"({"w": {"dtype": "I8", "shape": [2, 3], "data_offsets": [0, 6]}})", data,
                "tensor w is I8 but has no per-row scales: expected w_scale (F32, shape [2])");
  ExpectRefused(R"({"w": {"dtype": "I8", "shape": [6], "data_offsets": [0, 6]}, )"
                R"("w_scale": {"dtype": "F32", "shape": [6], "data_offsets": [8, 32]}})",
                data, "tensor w is I8 with shape [6]: only matrices (2 dimensions)");
  ExpectRefused(R"({"w": {"dtype": "I8", "shape": [2, 3], "data_offsets": [0, 6]}, )"
                R"("w_scale": {"dtype": "F16", "shape": [2], "data_offsets": [8, 12]}})",
                data, "tensor w_scale is F16 [2], expected F32 [2]: the per-row scales of w");
  ExpectRefused(R"({"w": {"dtype": "I8", "shape": [2, 3], "data_offsets": [0, 6]}, )"
                R"("w_scale": {"dtype": "F32", "shape": [3], "data_offsets": [8, 20]}})",
                data, "tensor w_scale is F32 [3], expected F32 [2]");
}

// A safetensors file under construction: tensors appended one after another.
struct FileBuilder {
  nlohmann::json header = nlohmann::json::object();
  std::string data;

  void Add(const std::string& name, const char* dtype, const std::vector<int64_t>& shape,
           const std::string& bytes) {
    const size_t begin = data.size();
    data += bytes;
    header[name] = {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {begin, data.size()}}};
    while (data.size() % 4 != 0) data.push_back('\0');  // keep the next F32 tensor aligned
  }
  void Write(const std::filesystem::path& path) const {
    const std::string text = header.dump();
    WriteFile(path, RawSafetensorsBytes(text.size(), text, data));
  }
};

// Writes `config`'s tensors with every matrix named in `int8` stored as I8 + scales and the
// rest F32; also returns the F32 values each tensor stands for (q * scale for the I8 ones).
void WriteInt8Model(const std::filesystem::path& dir, const nlohmann::json& config,
                    const std::vector<std::string>& int8,
                    std::map<std::string, std::vector<float>>& values) {
  std::filesystem::create_directories(dir);
  WriteFile(dir / "config.json", config.dump(2));
  FileBuilder file;
  uint32_t seed = 7;
  for (const testing::TensorSpec& spec : testing::ExpectedTensorSpecs(config)) {
    int64_t elements = 1;
    for (int64_t extent : spec.shape) elements *= extent;
    std::vector<float>& value = values[spec.name];
    const bool quantised = std::find(int8.begin(), int8.end(), spec.name) != int8.end();
    if (quantised) {
      const int64_t rows = spec.shape[0];
      const int64_t cols = elements / rows;
      std::vector<int8_t> q(elements);
      std::vector<float> scales(rows);
      for (int64_t r = 0; r < rows; ++r) {
        scales[r] = 0.001f * static_cast<float>(1 + (seed++ % 9));
        for (int64_t c = 0; c < cols; ++c) {
          q[r * cols + c] = static_cast<int8_t>(
              static_cast<int>((seed = seed * 1103515245u + 12345u) >> 16) % 255 - 127);
          value.push_back(q[r * cols + c] * scales[r]);
        }
      }
      file.Add(spec.name + "_scale", "F32", {rows}, Bytes(scales.data(), rows * sizeof(float)));
      file.Add(spec.name, "I8", spec.shape, Bytes(q.data(), q.size()));
    } else {
      for (int64_t i = 0; i < elements; ++i) {
        seed = seed * 1103515245u + 12345u;
        value.push_back(static_cast<float>((seed >> 16) % 1000) / 1000.0f - 0.5f);
      }
      file.Add(spec.name, "F32", spec.shape, Bytes(value.data(), value.size() * sizeof(float)));
    }
  }
  file.Write(dir / "model.safetensors");
}

// The same tensors all F32 (the I8 ones dequantised).
void WriteF32Model(const std::filesystem::path& dir, const nlohmann::json& config,
                   const std::map<std::string, std::vector<float>>& values) {
  std::filesystem::create_directories(dir);
  WriteFile(dir / "config.json", config.dump(2));
  FileBuilder file;
  for (const testing::TensorSpec& spec : testing::ExpectedTensorSpecs(config)) {
    const std::vector<float>& value = values.at(spec.name);
    file.Add(spec.name, "F32", spec.shape, Bytes(value.data(), value.size() * sizeof(float)));
  }
  file.Write(dir / "model.safetensors");
}

TEST(Int8ModelTest, AnInt8ModelComputesWhatItsDequantisedWeightsCompute) {
  TempDir dir;
  const nlohmann::json config = testing::SmallConfig("abc");
  // Every linear matrix and the (tied) embedding int8; a luna/abc constant would stay F32.
  std::vector<std::string> int8 = {"tok_embed.weight"};
  for (int layer = 0; layer < 2; ++layer) {
    const std::string prefix = "layers." + std::to_string(layer) + ".";
    for (const char* name :
         {"attn.q_proj.weight", "attn.k_proj.weight", "attn.v_proj.weight", "attn.slot_proj.weight",
          "attn.o_proj.weight", "ffn.up.weight", "ffn.down.weight"}) {
      int8.push_back(prefix + name);
    }
  }
  std::map<std::string, std::vector<float>> values;
  WriteInt8Model(dir.path() / "int8", config, int8, values);
  WriteF32Model(dir.path() / "f32", config, values);
  const std::vector<int32_t> tokens = {1, 7, 3, 22, 9, 15, 4};
  for (kernels::Backend backend : {kernels::Backend::kReference, kernels::Backend::kCpu}) {
    std::vector<std::vector<float>> logits;
    for (const char* variant : {"int8", "f32"}) {
      auto model = LanguageModel::Load(dir.path() / variant, backend);
      ASSERT_TRUE(model.ok()) << model.status();
      auto states = (*model)->AllocateStates(1);
      ASSERT_TRUE(states.ok()) << states.status();
      std::vector<float> out(tokens.size() * 40);
      ASSERT_TRUE(
          (*model)
              ->Prefill(**states, 0, tokens, LogitsWanted::kEveryToken, std::span<float>(out))
              .ok());
      logits.push_back(out);
    }
    for (size_t i = 0; i < logits[0].size(); ++i) {
      ASSERT_NEAR(logits[0][i], logits[1][i], 1e-4f * (1.0f + std::abs(logits[1][i])))
          << kernels::BackendName(backend) << " logit " << i;
    }
  }
}

}  // namespace
}  // namespace slotserve::models
