// slotserve-generate: loads a model directory, prefills the prompt (whole or in chunks of
// --prefill-chunk tokens), then decodes greedily for --max-new-tokens tokens, stopping early
// after the model's eos_id. Prints the generated token ids, comma-separated, on one line.
// --dump-logits FILE writes one float32 little-endian row of vocab_size logits for every token
// fed to the model: each prompt token, then each generated token fed back, in order.
// Any error: one line on stderr, exit status 1 (2 for bad flags).
#include <algorithm>
#include <bit>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "models/language_model.h"
#include "base/status_macros.h"
#include "models/tools/command_line.h"
#include "models/tools/generate_options.h"

namespace slotserve::models {
namespace {

static_assert(std::endian::native == std::endian::little,
              "--dump-logits writes the host's floats as little-endian");

class LogitsDump {
 public:
  absl::Status Open(const std::string& path) {
    file_.open(path, std::ios::binary | std::ios::trunc);
    if (!file_)
      return absl::InvalidArgumentError(absl::StrCat("--dump-logits: cannot write ", path));
    path_ = path;
    return absl::OkStatus();
  }
  bool enabled() const { return file_.is_open(); }
  absl::Status Write(std::span<const float> rows) {
    if (!enabled()) return absl::OkStatus();
    file_.write(reinterpret_cast<const char*>(rows.data()),
                static_cast<std::streamsize>(rows.size_bytes()));
    if (!file_)
      return absl::DataLossError(absl::StrCat("--dump-logits: write to ", path_, " failed"));
    return absl::OkStatus();
  }
  absl::Status Close() {
    if (!enabled()) return absl::OkStatus();
    file_.close();
    if (!file_)
      return absl::DataLossError(absl::StrCat("--dump-logits: write to ", path_, " failed"));
    return absl::OkStatus();
  }

 private:
  std::ofstream file_;
  std::string path_;
};

// Lowest index of the largest logit.
int32_t Argmax(std::span<const float> logits) {
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

absl::StatusOr<std::vector<int32_t>> Generate(const GenerateOptions& options) {
  SLOTSERVE_ASSIGN_OR_RETURN(std::unique_ptr<LanguageModel> model,
                             LanguageModel::Load(options.model_dir, options.backend));
  const ModelConfig& config = model->config();
  const int vocab = config.vocab_size;
  for (const int32_t id : options.prompt_ids) {
    if (id >= vocab) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--prompt-ids: token ", id, " is outside the model's vocabulary [0, ", vocab, ")"));
    }
  }
  const int64_t prompt_length = static_cast<int64_t>(options.prompt_ids.size());
  const int64_t fed_tokens = prompt_length + std::max(options.max_new_tokens - 1, 0);
  if (fed_tokens > model->max_positions()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the prompt (", prompt_length, " tokens) plus --max-new-tokens ", options.max_new_tokens,
        " needs ", fed_tokens, " positions; this model holds at most ", model->max_positions()));
  }

  LogitsDump dump;
  if (!options.dump_logits.empty()) SLOTSERVE_RETURN_IF_ERROR(dump.Open(options.dump_logits));
  SLOTSERVE_ASSIGN_OR_RETURN(std::unique_ptr<StateArena> states, model->AllocateStates(1));

  const std::span<const int32_t> prompt(options.prompt_ids);
  const size_t chunk = static_cast<size_t>(options.prefill_chunk.value_or(prompt.size()));
  const LogitsWanted wanted = dump.enabled() ? LogitsWanted::kEveryToken : LogitsWanted::kLastToken;
  std::vector<float> logits;
  for (size_t first = 0; first < prompt.size(); first += chunk) {
    const std::span<const int32_t> piece =
        prompt.subspan(first, std::min(chunk, prompt.size() - first));
    logits.resize(wanted == LogitsWanted::kEveryToken ? piece.size() * vocab : vocab);
    SLOTSERVE_RETURN_IF_ERROR(model->Prefill(*states, 0, piece, wanted, logits));
    SLOTSERVE_RETURN_IF_ERROR(dump.Write(logits));
  }
  // The logits after the last prompt token: its row of the last chunk.
  std::vector<float> last(logits.end() - vocab, logits.end());

  std::vector<int32_t> generated;
  const int32_t slot = 0;
  while (static_cast<int>(generated.size()) < options.max_new_tokens) {
    const int32_t next = Argmax(last);
    generated.push_back(next);
    if (next == config.eos_id || static_cast<int>(generated.size()) == options.max_new_tokens) {
      break;
    }
    SLOTSERVE_RETURN_IF_ERROR(model->Step(*states, {&slot, 1}, {&next, 1}, last));
    SLOTSERVE_RETURN_IF_ERROR(dump.Write(last));
  }
  SLOTSERVE_RETURN_IF_ERROR(dump.Close());
  return generated;
}

}  // namespace
}  // namespace slotserve::models

int main(int argc, char** argv) {
  using namespace slotserve::models;
  const std::vector<std::string> args(argv, argv + argc);
  auto options = ParseGenerateOptions(args);
  if (!options.ok()) {
    std::cerr << "slotserve-generate: " << OneLineMessage(options.status()) << " ("
              << kGenerateUsage << ")\n";
    return 2;
  }
  if (options->help) {
    std::cout << kGenerateUsage << "\n";
    return 0;
  }
  auto generated = Generate(*options);
  if (!generated.ok()) {
    std::cerr << "slotserve-generate: " << OneLineMessage(generated.status()) << "\n";
    return 1;
  }
  std::cout << absl::StrJoin(*generated, ",") << "\n";
  return 0;
}
