// slotserve-generate as a user runs it: bad model directories and bad flags end with a
// non-zero exit and exactly one line on stderr naming the problem; a good run prints one line
// of token ids.
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/unit/models/test_model_dir.h"

namespace slotserve::models {
namespace {

using testing::SetPath;
using testing::SmallConfig;

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

std::string Quote(const std::string& arg) {
  std::string quoted = "'";
  for (char c : arg) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

class GenerateToolTest : public ::testing::Test {
 protected:
  RunResult Run(const std::vector<std::string>& args) {
    std::string command = Quote(SLOTSERVE_GENERATE_BINARY);
    for (const std::string& arg : args) command += " " + Quote(arg);
    const auto out = dir_.path() / "stdout.txt";
    const auto err = dir_.path() / "stderr.txt";
    command += " >" + Quote(out.string()) + " 2>" + Quote(err.string());
    const int status = std::system(command.c_str());
    RunResult result;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.out = ReadAll(out);
    result.err = ReadAll(err);
    return result;
  }

  // A failing run: non-zero exit, nothing on stdout, one line on stderr containing `expected`.
  void ExpectOneLineError(const std::vector<std::string>& args, const std::string& expected) {
    const RunResult result = Run(args);
    EXPECT_NE(result.exit_code, 0) << result.out;
    EXPECT_NE(result.exit_code, -1) << "crashed: " << result.err;
    EXPECT_EQ(result.out, "");
    ASSERT_FALSE(result.err.empty());
    EXPECT_EQ(result.err.back(), '\n');
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
    EXPECT_EQ(result.err.rfind("slotserve-generate: ", 0), 0u) << result.err;
    EXPECT_NE(result.err.find(expected), std::string::npos)
        << "stderr: " << result.err << "expected to contain: " << expected;
  }

  std::string ModelDir(const std::string& name) { return (dir_.path() / name).string(); }

  testing::TempDir dir_;
};

TEST_F(GenerateToolTest, GeneratesTokenIdsFromAValidModel) {
  testing::WriteModelDir(ModelDir("abc"), SmallConfig("abc"));
  const RunResult result = Run({"--model", ModelDir("abc"), "--prompt-ids", "1,5,17",
                                "--max-new-tokens", "4", "--backend", "reference"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  ASSERT_FALSE(result.out.empty());
  EXPECT_EQ(result.out.back(), '\n');
  const std::vector<std::string> ids =
      absl::StrSplit(result.out.substr(0, result.out.size() - 1), ',');
  ASSERT_GE(ids.size(), 1u);
  ASSERT_LE(ids.size(), 4u);
  for (size_t i = 0; i < ids.size(); ++i) {
    const int id = std::stoi(ids[i]);
    EXPECT_GE(id, 0);
    EXPECT_LT(id, 40);
    // Fewer than requested only when eos (2) ended it.
    if (ids.size() < 4 && i + 1 == ids.size()) {
      EXPECT_EQ(id, 2);
    }
  }
}

TEST_F(GenerateToolTest, DumpsOneLogitsRowPerFedToken) {
  testing::WriteModelDir(ModelDir("luna"), SmallConfig("luna"));
  const std::string dump = (dir_.path() / "logits.f32").string();
  const RunResult result =
      Run({"--model", ModelDir("luna"), "--prompt-ids", "1,5,17,3,9", "--max-new-tokens", "3",
           "--prefill-chunk", "2", "--dump-logits", dump, "--backend=cpu"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const size_t generated =
      static_cast<size_t>(std::count(result.out.begin(), result.out.end(), ',')) + 1;
  // 5 prompt rows, then one per generated token fed back (the last is never fed).
  EXPECT_EQ(std::filesystem::file_size(dump), (5 + generated - 1) * 40 * sizeof(float));
}

TEST_F(GenerateToolTest, RefusesBadModelDirectories) {
  const std::vector<std::string> flags = {"--prompt-ids", "1,2", "--max-new-tokens", "2"};
  auto run = [&](const std::string& dir, const std::string& expected) {
    std::vector<std::string> args = {"--model", dir};
    args.insert(args.end(), flags.begin(), flags.end());
    ExpectOneLineError(args, expected);
  };
  run(ModelDir("does-not-exist"), "not a model directory");

  std::filesystem::create_directories(ModelDir("empty"));
  run(ModelDir("empty"), "config.json: no such file");

  nlohmann::json bad_key = SmallConfig("abc");
  SetPath(bad_key, "attention.slotz", 3);
  testing::WriteModelDir(ModelDir("bad-key"), SmallConfig("abc"));
  testing::WriteFile(std::filesystem::path(ModelDir("bad-key")) / "config.json", bad_key.dump());
  run(ModelDir("bad-key"), "unknown key \"attention.slotz\"");

  testing::WriteModelDir(ModelDir("bad-json"), SmallConfig("abc"));
  testing::WriteFile(std::filesystem::path(ModelDir("bad-json")) / "config.json",
                     "{\n\"format\":\n");
  run(ModelDir("bad-json"), "not valid JSON");

  const nlohmann::json rfa = SmallConfig("rfa");
  std::vector<testing::TensorSpec> tensors = testing::ExpectedTensorSpecs(rfa);
  tensors.pop_back();
  testing::WriteModelDir(ModelDir("missing-tensor"), rfa, tensors);
  run(ModelDir("missing-tensor"), "missing tensor");

  testing::WriteModelDir(ModelDir("truncated"), SmallConfig("softmax"));
  const auto truncated = std::filesystem::path(ModelDir("truncated")) / "model.safetensors";
  std::filesystem::resize_file(truncated, std::filesystem::file_size(truncated) - 100);
  run(ModelDir("truncated"), "past the end of the data");

  testing::WriteModelDir(ModelDir("lying-header"), SmallConfig("softmax"));
  testing::WriteFile(std::filesystem::path(ModelDir("lying-header")) / "model.safetensors",
                     testing::RawSafetensorsBytes(1 << 20, "{}", ""));
  run(ModelDir("lying-header"), "runs past the end");
}

TEST_F(GenerateToolTest, RefusesBadFlags) {
  testing::WriteModelDir(ModelDir("abc"), SmallConfig("abc"));
  const std::string model = ModelDir("abc");
  ExpectOneLineError({}, "missing required flag --model");
  ExpectOneLineError({"--model", model, "--max-new-tokens", "2"},
                     "missing required flag --prompt-ids");
  ExpectOneLineError({"--model", model, "--prompt-ids", "1"},
                     "missing required flag --max-new-tokens");
  ExpectOneLineError(
      {"--model", model, "--prompt-ids", "1", "--max-new-tokens", "2", "--temperature", "1"},
      "unknown flag --temperature");
  ExpectOneLineError({"--model", model, "--prompt-ids", "1,x", "--max-new-tokens", "2"},
                     "--prompt-ids expects comma-separated");
  ExpectOneLineError({"--model", model, "--prompt-ids", "", "--max-new-tokens", "2"},
                     "--prompt-ids expects");
  ExpectOneLineError({"--model", model, "--prompt-ids", "1", "--max-new-tokens", "-1"},
                     "--max-new-tokens must be >= 0, got -1");
  ExpectOneLineError({"--model", model, "--prompt-ids", "1", "--max-new-tokens", "two"},
                     "--max-new-tokens expects an integer");
  ExpectOneLineError(
      {"--model", model, "--prompt-ids", "1", "--max-new-tokens", "2", "--prefill-chunk", "0"},
      "--prefill-chunk must be >= 1, got 0");
  ExpectOneLineError(
      {"--model", model, "--prompt-ids", "1", "--max-new-tokens", "2", "--backend", "tpu"},
      "--backend must be reference, cpu or cuda");
  ExpectOneLineError({"--model", model, "--prompt-ids", "1", "--max-new-tokens"},
                     "--max-new-tokens needs a value");
  ExpectOneLineError(
      {"--model", model, "--model", model, "--prompt-ids", "1", "--max-new-tokens", "1"},
      "--model given more than once");
  ExpectOneLineError({"--model", model, "--prompt-ids", "1,40", "--max-new-tokens", "2"},
                     "token 40 is outside the model's vocabulary [0, 40)");
  ExpectOneLineError({"--model", model, "--prompt-ids", "1", "--max-new-tokens", "2",
                      "--dump-logits", (dir_.path() / "no-such-dir" / "x.f32").string()},
                     "--dump-logits: cannot write");
}

TEST_F(GenerateToolTest, RefusesAContextLongerThanTheModelHolds) {
  testing::WriteModelDir(ModelDir("softmax"), SmallConfig("softmax"));  // max_context 12
  ExpectOneLineError({"--model", ModelDir("softmax"), "--prompt-ids", "1,2,3,4,5,6,7,8,9,10",
                      "--max-new-tokens", "4"},
                     "needs 13 positions; this model holds at most 12");
}

TEST_F(GenerateToolTest, RefusesCudaWithoutAGpu) {
  testing::WriteModelDir(ModelDir("abc"), SmallConfig("abc"));
  const RunResult probe = Run({"--model", ModelDir("abc"), "--prompt-ids", "1", "--max-new-tokens",
                               "1", "--backend", "cuda"});
  if (probe.exit_code == 0) GTEST_SKIP() << "a GPU is present";
  ExpectOneLineError({"--model", ModelDir("abc"), "--prompt-ids", "1", "--max-new-tokens", "1",
                      "--backend", "cuda"},
                     "backend cuda");
}

}  // namespace
}  // namespace slotserve::models
