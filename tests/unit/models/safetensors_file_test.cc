// The safetensors reader against crafted files: values of every supported dtype come back
// exactly, and every malformed header or data section is refused with a message, never read.
#include "models/safetensors_file.h"

#include <string>

#include "gtest/gtest.h"
#include "kernels/float16.h"
#include "tests/unit/models/test_model_dir.h"

namespace slotserve::models {
namespace {

using testing::RawSafetensorsBytes;
using testing::SafetensorsBytes;
using testing::TempDir;
using testing::TensorSpec;
using testing::WriteFile;

class SafetensorsFileTest : public ::testing::Test {
 protected:
  // Writes `bytes` as a file and opens it.
  absl::StatusOr<std::unique_ptr<SafetensorsFile>> OpenBytes(const std::string& bytes) {
    const auto path = dir_.path() / "model.safetensors";
    WriteFile(path, bytes);
    return SafetensorsFile::Open(path);
  }
  // Expects the file to be refused with a message containing `expected`.
  void ExpectRefused(const std::string& bytes, const std::string& expected) {
    auto file = OpenBytes(bytes);
    ASSERT_FALSE(file.ok()) << "accepted a malformed file; expected: " << expected;
    EXPECT_NE(file.status().message().find(expected), std::string::npos)
        << "message: " << file.status().message() << "\nexpected to contain: " << expected;
    EXPECT_NE(file.status().message().find("model.safetensors"), std::string::npos)
        << file.status().message();
  }
  // A header with one tensor entry (JSON text of the entry).
  static std::string OneTensorHeader(const std::string& entry) { return "{\"t\": " + entry + "}"; }
  static std::string WithHeader(const std::string& header, const std::string& data) {
    return RawSafetensorsBytes(header.size(), header, data);
  }

  TempDir dir_;
};

TEST_F(SafetensorsFileTest, ReadsEveryDtypeBackAsFloat32) {
  const float f32[3] = {1.5f, -2.25f, 3.0f};
  const uint16_t f16[2] = {kernels::FloatToHalf(0.5f), kernels::FloatToHalf(-3.0f)};
  const uint16_t bf16[2] = {kernels::FloatToBFloat16(2.0f), kernels::FloatToBFloat16(-0.125f)};
  std::string data(reinterpret_cast<const char*>(f32), sizeof(f32));
  data.append(reinterpret_cast<const char*>(f16), sizeof(f16));
  data.append(reinterpret_cast<const char*>(bf16), sizeof(bf16));
  // Odd-length header: the data starts unaligned, which the reader must tolerate.
  const std::string header =
      R"({"__metadata__": {"format": "pt"}, "a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]}, )"
      R"("h": {"dtype": "F16", "shape": [1, 2], "data_offsets": [12, 16]}, )"
      R"("b": {"dtype": "BF16", "shape": [2], "data_offsets": [16, 20]}} )";
  auto file = OpenBytes(WithHeader(header, data));
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_EQ((*file)->tensors().size(), 3u);
  const SafetensorsTensor* a = (*file)->Find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->dtype, kernels::DType::kF32);
  EXPECT_EQ(a->shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(a->ToFloat32(), (std::vector<float>{1.5f, -2.25f, 3.0f}));
  const SafetensorsTensor* h = (*file)->Find("h");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->dtype, kernels::DType::kF16);
  EXPECT_EQ(h->shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(h->ToFloat32(), (std::vector<float>{0.5f, -3.0f}));
  const SafetensorsTensor* b = (*file)->Find("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->dtype, kernels::DType::kBF16);
  EXPECT_EQ(b->ToFloat32(), (std::vector<float>{2.0f, -0.125f}));
  EXPECT_EQ((*file)->Find("missing"), nullptr);
}

TEST_F(SafetensorsFileTest, AcceptsEmptyTensorsAndAnEmptyHeader) {
  auto empty = OpenBytes(WithHeader("{}", ""));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE((*empty)->tensors().empty());
  auto zero = OpenBytes(SafetensorsBytes({{"z", "F32", {0, 4}}, {"w", "F32", {2}}}));
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_EQ((*zero)->Find("z")->num_elements(), 0);
}

TEST_F(SafetensorsFileTest, RefusesAMissingFile) {
  auto file = SafetensorsFile::Open(dir_.path() / "model.safetensors");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(file.status().message().find("model.safetensors: no such file"), std::string::npos)
      << file.status().message();
}

TEST_F(SafetensorsFileTest, RefusesADirectory) {
  std::filesystem::create_directory(dir_.path() / "model.safetensors");
  auto file = SafetensorsFile::Open(dir_.path() / "model.safetensors");
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.status().message().find("not a regular file"), std::string::npos);
}

TEST_F(SafetensorsFileTest, RefusesAFileShorterThanTheLengthPrefix) {
  ExpectRefused("", "too short");
  ExpectRefused("abc", "too short");
}

TEST_F(SafetensorsFileTest, RefusesAHeaderLengthPastTheEnd) {
  ExpectRefused(RawSafetensorsBytes(1000, "{}", ""), "header length 1000 runs past the end");
  ExpectRefused(RawSafetensorsBytes(UINT64_MAX, "{}", ""), "over the");
}

TEST_F(SafetensorsFileTest, RefusesAHugeHeaderBeforeReadingIt) {
  // Declares 200 MB: refused on the declared length alone.
  ExpectRefused(RawSafetensorsBytes(200u << 20, "{}", ""), "over the 104857600-byte limit");
}

TEST_F(SafetensorsFileTest, RefusesBadJson) {
  ExpectRefused(WithHeader("{\"t\": {\"dtype\": ", ""), "not valid JSON");
  ExpectRefused(WithHeader("[]", ""), "must be a JSON object");
  ExpectRefused(WithHeader("{\"a\": 1, \"a\": 2}", ""), "appears more than once");
}

TEST_F(SafetensorsFileTest, RefusesANonUtf8Header) {
  ExpectRefused(WithHeader("{\"t\xfe\": {}}", ""), "not valid UTF-8");
}

TEST_F(SafetensorsFileTest, RefusesUnknownAndUnsupportedDtypes) {
  const std::string data(16, '\0');
  ExpectRefused(
      WithHeader(OneTensorHeader(R"({"dtype": "Q4", "shape": [4], "data_offsets": [0, 16]})"),
                 data),
      "tensor t has dtype \"Q4\", expected F32, F16, BF16 or I8");
  ExpectRefused(
      WithHeader(OneTensorHeader(R"({"dtype": "I32", "shape": [4], "data_offsets": [0, 16]})"),
                 data),
      "expected F32, F16, BF16 or I8");
  ExpectRefused(
      WithHeader(OneTensorHeader(R"({"dtype": 4, "shape": [4], "data_offsets": [0, 16]})"), data),
      "expected a string");
}

TEST_F(SafetensorsFileTest, RefusesMalformedTensorEntries) {
  const std::string data(16, '\0');
  ExpectRefused(WithHeader(OneTensorHeader(R"({"dtype": "F32", "shape": [4]})"), data),
                "tensor t is missing \"data_offsets\"");
  ExpectRefused(
      WithHeader(
          OneTensorHeader(R"({"dtype": "F32", "shape": [4], "data_offsets": [0, 16], "extra": 1})"),
          data),
      "tensor t has unknown key \"extra\"");
  ExpectRefused(WithHeader(OneTensorHeader("7"), data), "must be described by an object");
  ExpectRefused(
      WithHeader(OneTensorHeader(R"({"dtype": "F32", "shape": [-4], "data_offsets": [0, 16]})"),
                 data),
      "expected non-negative integers");
  ExpectRefused(
      WithHeader(OneTensorHeader(R"({"dtype": "F32", "shape": 4, "data_offsets": [0, 16]})"), data),
      "expected an array");
  ExpectRefused(
      WithHeader(OneTensorHeader(R"({"dtype": "F32", "shape": [4], "data_offsets": [16, 0]})"),
                 data),
      "expected [begin, end]");
  ExpectRefused(
      WithHeader(OneTensorHeader(R"({"dtype": "F32", "shape": [4], "data_offsets": [0]})"), data),
      "expected [begin, end]");
  ExpectRefused(WithHeader(R"({"__metadata__": {"a": 1}})", ""), "__metadata__.a must be a string");
}

TEST_F(SafetensorsFileTest, RefusesOffsetsPastTheEnd) {
  const std::string data(16, '\0');
  ExpectRefused(
      WithHeader(OneTensorHeader(R"({"dtype": "F32", "shape": [8], "data_offsets": [0, 32]})"),
                 data),
      "tensor t has data_offsets [0, 32] past the end of the data (16 bytes");
  ExpectRefused(
      WithHeader(
          OneTensorHeader(
              R"({"dtype": "F32", "shape": [1], "data_offsets": [18446744073709551611, 18446744073709551615]})"),
          data),
      "past the end of the data");
}

TEST_F(SafetensorsFileTest, RefusesTruncatedData) {
  std::string bytes = SafetensorsBytes({{"a", "F32", {4, 4}}, {"b", "F32", {4}}});
  bytes.resize(bytes.size() - 5);
  ExpectRefused(bytes, "tensor b has data_offsets [64, 80] past the end of the data (75 bytes");
}

TEST_F(SafetensorsFileTest, RefusesASizeThatDoesNotMatchTheShape) {
  const std::string data(20, '\0');
  ExpectRefused(
      WithHeader(OneTensorHeader(R"({"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 20]})"),
                 data),
      "tensor t has 20 bytes of data, but shape [2, 3] of F32 needs 24");
  ExpectRefused(
      WithHeader(
          OneTensorHeader(
              R"({"dtype": "BF16", "shape": [4611686018427387904, 4611686018427387904], "data_offsets": [0, 16]})"),
          data),
      "needs more than the file holds");
}

TEST_F(SafetensorsFileTest, RefusesOverlappingTensors) {
  const std::string data(32, '\0');
  const std::string header = R"({"a": {"dtype": "F32", "shape": [6], "data_offsets": [0, 24]}, )"
                             R"("e": {"dtype": "F32", "shape": [0], "data_offsets": [8, 8]}, )"
                             R"("b": {"dtype": "F32", "shape": [2], "data_offsets": [16, 24]}})";
  ExpectRefused(WithHeader(header, data), "tensors a and b have overlapping data_offsets");
}

}  // namespace
}  // namespace slotserve::models
