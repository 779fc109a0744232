// slotserve-generate --dump-logits against the golden data: the file the tool writes holds the
// reference's logits for the prompt, and the rows of the tokens it generates and feeds back
// equal the engine's own logits for the same sequence.
#include <sys/wait.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "models/language_model.h"
#include "tests/golden/golden_data.h"

namespace slotserve::golden {
namespace {

constexpr float kTolerance = 1e-4f;

class GoldenGenerateTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    auto golden = LoadGoldenData(Dir());
    ASSERT_TRUE(golden.ok()) << golden.status();
    golden_ = *std::move(golden);
    out_ = std::filesystem::temp_directory_path() /
           ("slotserve-golden-generate-" + GetParam() + "-" + std::to_string(getpid()));
    std::filesystem::create_directories(out_);
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(out_, ignored);
  }

  std::filesystem::path Dir() const { return GoldenModelsDir() / GetParam(); }

  // Runs the tool on the cpu backend; returns the generated ids and the dumped logits.
  void Generate(std::span<const int32_t> prompt, int max_new_tokens, int chunk,
                std::vector<int32_t>* generated, std::vector<float>* dumped) {
    const auto dump = out_ / "logits.f32";
    const auto stdout_file = out_ / "stdout.txt";
    const std::string command =
        std::string(SLOTSERVE_GENERATE_BINARY) + " --model '" + Dir().string() + "' --prompt-ids " +
        absl::StrJoin(prompt, ",") + " --max-new-tokens " + std::to_string(max_new_tokens) +
        " --prefill-chunk " + std::to_string(chunk) + " --backend cpu --dump-logits '" +
        dump.string() + "' > '" + stdout_file.string() + "'";
    const int status = std::system(command.c_str());
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command;
    std::ifstream out(stdout_file);
    std::string line;
    std::getline(out, line);
    generated->clear();
    for (const absl::string_view id : absl::StrSplit(line, ',', absl::SkipEmpty())) {
      int32_t value;
      ASSERT_TRUE(absl::SimpleAtoi(id, &value)) << line;
      generated->push_back(value);
    }
    std::ifstream file(dump, std::ios::binary);
    std::ostringstream bytes;
    bytes << file.rdbuf();
    const std::string data = bytes.str();
    dumped->resize(data.size() / sizeof(float));
    std::memcpy(dumped->data(), data.data(), dumped->size() * sizeof(float));
  }

  GoldenData golden_;
  std::filesystem::path out_;
};

TEST_P(GoldenGenerateTest, DumpedPromptLogitsMatchTheGoldenOnes) {
  std::vector<int32_t> generated;
  std::vector<float> dumped;
  Generate(golden_.tokens, 1, 16, &generated, &dumped);
  EXPECT_LE(MaxAbsDiff(dumped, golden_.logits), kTolerance);
  ASSERT_EQ(generated.size(), 1u);
  const std::span<const float> last = golden_.Row(golden_.tokens.size() - 1);
  const float best = *std::max_element(last.begin(), last.end());
  EXPECT_GE(last[generated[0]], best - 2 * kTolerance) << "not the greedy choice";
}

TEST_P(GoldenGenerateTest, FedBackTokensGetTheEnginesLogits) {
  const size_t prompt_length = 24;
  const std::span<const int32_t> prompt = std::span(golden_.tokens).first(prompt_length);
  std::vector<int32_t> generated;
  std::vector<float> dumped;
  Generate(prompt, 6, 5, &generated, &dumped);
  ASSERT_GE(generated.size(), 1u);
  const size_t rows = prompt_length + generated.size() - 1;
  ASSERT_EQ(dumped.size(), rows * golden_.vocab_size);
  EXPECT_LE(MaxAbsDiff(std::span(dumped).first(prompt_length * golden_.vocab_size),
                       std::span(golden_.logits).first(prompt_length * golden_.vocab_size)),
            kTolerance);

  // The same sequence through the engine in one prefill.
  std::vector<int32_t> sequence(prompt.begin(), prompt.end());
  sequence.insert(sequence.end(), generated.begin(), generated.end() - 1);
  auto model = models::LanguageModel::Load(Dir(), kernels::Backend::kCpu);
  ASSERT_TRUE(model.ok()) << model.status();
  auto states = (*model)->AllocateStates(1);
  ASSERT_TRUE(states.ok());
  std::vector<float> expected(rows * golden_.vocab_size);
  ASSERT_TRUE(
      (*model)->Prefill(**states, 0, sequence, models::LogitsWanted::kEveryToken, expected).ok());
  EXPECT_LE(MaxAbsDiff(dumped, expected), kTolerance);
  // Each generated token is the greedy choice of the row before it.
  for (size_t i = 0; i < generated.size(); ++i) {
    const std::span<const float> row = std::span<const float>(expected).subspan(
        (prompt_length - 1 + i) * golden_.vocab_size, golden_.vocab_size);
    EXPECT_EQ(generated[i], std::max_element(row.begin(), row.end()) - row.begin()) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, GoldenGenerateTest, ::testing::ValuesIn(GoldenVariants()),
                         [](const auto& info) { return info.param; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GoldenGenerateTest);

}  // namespace
}  // namespace slotserve::golden
