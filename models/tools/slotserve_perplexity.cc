// slotserve-perplexity: test-set perplexity of a model directory computed by the C++ engine,
// with the evaluation protocol of python/evaluation.py (the PyTorch side does the same,
// so the two numbers are comparable token for token):
//
//   --ids FILE holds one book per line (token ids, space-separated, no BOS). Each book is cut
//   into consecutive windows of --window tokens (the last one shorter). A window starts from an
//   empty state: the model reads BOS and the window's tokens but the last, streamed through
//   LanguageModel::Prefill in pieces of --prefill-chunk tokens (the recurrent state carries
//   across pieces), and every token of the window is scored: -log softmax(logits)[token].
//
//   An encoder–decoder model takes --source-ids and --target-ids instead (line i of one is the
//   source of line i of the other), scored as python/evaluate_seq2seq_perplexity.py and
//   training score them (models/tools/seq2seq_perplexity.h).
//
// Prints one JSON object: tokens scored, summed negative log-likelihood (nats), perplexity,
// windows (or pairs), state bytes per request, seconds. Errors: one line on stderr, exit status 1
// (2 for bad flags).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "base/status_macros.h"
#include "models/int8_activations.h"
#include "models/language_model.h"
#include "models/tools/id_lines.h"
#include "models/tools/seq2seq_perplexity.h"
#include "models/tools/token_scores.h"

namespace slotserve::models {
namespace {

constexpr char kUsage[] =
    "usage: slotserve-perplexity --model DIR (--ids FILE --window N [--prefill-chunk K] | "
    "--source-ids FILE --target-ids FILE) [--max-tokens N] [--backend reference|cpu|cuda] "
    "[--int8-activations on|off] [--kv-cache-dtype f32|f16]";

struct PerplexityOptions {
  std::string model_dir;
  std::string ids_file;
  int window = 0;
  // Encoder–decoder models: parallel files of sources and targets.
  std::string source_ids_file;
  std::string target_ids_file;
  int prefill_chunk = 64;
  int64_t max_tokens = 0;  // 0 = every token of the file
  kernels::Backend backend = kernels::Backend::kCpu;
  bool int8_activations = false;                     // models/int8_activations.h
  KvCacheDtype kv_cache_dtype = KvCacheDtype::kF32;  // models/kv_cache_dtype.h
};

absl::StatusOr<int64_t> ParsePositive(const std::string& flag, const std::string& text) {
  int64_t value;
  if (!absl::SimpleAtoi(text, &value) || value < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " expects a positive integer, got \"", text, "\""));
  }
  return value;
}

absl::StatusOr<PerplexityOptions> ParseOptions(const std::vector<std::string>& args) {
  std::map<std::string, std::string> values;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& flag = args[i];
    static const char* const kFlags[] = {
        "--model",      "--ids",           "--window",           "--max-tokens",
        "--backend",    "--prefill-chunk", "--int8-activations", "--kv-cache-dtype",
        "--source-ids", "--target-ids"};
    if (std::find(std::begin(kFlags), std::end(kFlags), flag) == std::end(kFlags)) {
      return absl::InvalidArgumentError(absl::StrCat("unknown argument \"", flag, "\""));
    }
    if (i + 1 >= args.size())
      return absl::InvalidArgumentError(absl::StrCat(flag, " needs a value"));
    values[flag] = args[++i];
  }
  const bool pairs = values.contains("--source-ids") || values.contains("--target-ids");
  if (pairs && (values.contains("--ids") || values.contains("--window") ||
                values.contains("--prefill-chunk"))) {
    return absl::InvalidArgumentError(
        "--source-ids/--target-ids (an encoder-decoder model) and --ids/--window/--prefill-chunk "
        "(a decoder-only one) do not go together");
  }
  const std::vector<const char*> required =
      pairs ? std::vector<const char*>{"--model", "--source-ids", "--target-ids"}
            : std::vector<const char*>{"--model", "--ids", "--window"};
  for (const char* flag : required) {
    if (!values.contains(flag)) {
      return absl::InvalidArgumentError(absl::StrCat("missing required flag ", flag));
    }
  }
  PerplexityOptions options;
  options.model_dir = values["--model"];
  if (pairs) {
    options.source_ids_file = values["--source-ids"];
    options.target_ids_file = values["--target-ids"];
  } else {
    options.ids_file = values["--ids"];
    SLOTSERVE_ASSIGN_OR_RETURN(const int64_t window, ParsePositive("--window", values["--window"]));
    options.window = static_cast<int>(window);
  }
  if (values.contains("--prefill-chunk")) {
    SLOTSERVE_ASSIGN_OR_RETURN(const int64_t chunk,
                               ParsePositive("--prefill-chunk", values["--prefill-chunk"]));
    options.prefill_chunk = static_cast<int>(chunk);
  }
  if (values.contains("--max-tokens")) {
    SLOTSERVE_ASSIGN_OR_RETURN(options.max_tokens,
                               ParsePositive("--max-tokens", values["--max-tokens"]));
  }
  if (values.contains("--backend")) {
    const std::string& name = values["--backend"];
    if (name == "reference") {
      options.backend = kernels::Backend::kReference;
    } else if (name == "cpu") {
      options.backend = kernels::Backend::kCpu;
    } else if (name == "cuda") {
      options.backend = kernels::Backend::kCuda;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("--backend must be reference, cpu or cuda, got \"", name, "\""));
    }
  }
  if (values.contains("--int8-activations")) {
    const std::string& value = values["--int8-activations"];
    if (value != "on" && value != "off") {
      return absl::InvalidArgumentError(
          absl::StrCat("--int8-activations must be on or off, got \"", value, "\""));
    }
    options.int8_activations = value == "on";
    if (options.int8_activations && options.backend == kernels::Backend::kCuda) {
      return absl::InvalidArgumentError(
          "--int8-activations on is implemented by the cpu and reference backends, not cuda");
    }
  }
  if (values.contains("--kv-cache-dtype")) {
    absl::StatusOr<KvCacheDtype> dtype = ParseKvCacheDtype(values["--kv-cache-dtype"]);
    if (!dtype.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--kv-cache-dtype ", dtype.status().message()));
    }
    options.kv_cache_dtype = *dtype;
  }
  return options;
}

// One book per non-empty line.
absl::StatusOr<std::vector<std::vector<int32_t>>> ReadBooks(const std::string& path) {
  return ReadIdLines("--ids", path, EmptyLines::kSkip);
}

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Totals {
  double nll = 0.0;
  int64_t tokens = 0;
  int64_t windows = 0;
};

absl::StatusOr<Totals> Evaluate(const PerplexityOptions& options, LanguageModel& model,
                                const std::vector<std::vector<int32_t>>& books) {
  const ModelConfig& config = model.config();
  const int vocab = config.vocab_size;
  if (options.window > model.max_positions()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--window ", options.window, " exceeds the model's max positions ", model.max_positions()));
  }
  SLOTSERVE_ASSIGN_OR_RETURN(std::unique_ptr<StateArena> states, model.AllocateStates(1));
  Totals totals;
  std::vector<int32_t> inputs;
  std::vector<float> logits;
  for (const std::vector<int32_t>& book : books) {
    for (size_t start = 0; start < book.size(); start += options.window) {
      const size_t length = std::min(book.size() - start, static_cast<size_t>(options.window));
      if (options.max_tokens > 0 && totals.tokens > 0 &&
          totals.tokens + static_cast<int64_t>(length) > options.max_tokens) {
        return totals;
      }
      const std::span<const int32_t> targets(book.data() + start, length);
      inputs.assign({config.bos_id});
      inputs.insert(inputs.end(), targets.begin(), targets.end() - 1);
      SLOTSERVE_RETURN_IF_ERROR(states->Reset(0));
      for (size_t first = 0; first < length; first += options.prefill_chunk) {
        const size_t piece = std::min(length - first, static_cast<size_t>(options.prefill_chunk));
        logits.resize(piece * vocab);
        SLOTSERVE_RETURN_IF_ERROR(
            model.Prefill(*states, 0, std::span<const int32_t>(inputs).subspan(first, piece),
                          LogitsWanted::kEveryToken, logits));
        for (size_t i = 0; i < piece; ++i) {
          const int32_t target = targets[first + i];
          if (target >= vocab) {
            return absl::InvalidArgumentError(absl::StrCat(
                "--ids: token ", target, " is outside the model's vocabulary [0, ", vocab, ")"));
          }
          totals.nll += NegativeLogLikelihood(
              std::span<const float>(logits).subspan(i * vocab, vocab), target);
        }
      }
      totals.tokens += static_cast<int64_t>(length);
      ++totals.windows;
    }
  }
  return totals;
}

// The decoder-only protocol: windows of books.
absl::Status RunWindows(const PerplexityOptions& options, LanguageModel& model,
                        const std::vector<std::vector<int32_t>>& books, Clock::time_point started) {
  if (model.seq2seq() != nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        options.model_dir, " is an encoder-decoder model: give --source-ids and --target-ids"));
  }
  SLOTSERVE_ASSIGN_OR_RETURN(const Totals totals, Evaluate(options, model, books));
  std::cout << absl::StrFormat(
      "{\"attention\": \"%s\", \"tokens\": %d, \"windows\": %d, \"window\": %d, "
      "\"nll\": %.6f, \"perplexity\": %.6f, \"state_bytes_per_request\": %d, "
      "\"backend\": \"%s\", \"seconds\": %.2f}\n",
      AttentionKindName(model.config().attention.kind), totals.tokens, totals.windows,
      options.window, totals.nll, std::exp(totals.nll / static_cast<double>(totals.tokens)),
      model.state_bytes_per_request(), kernels::BackendName(options.backend),
      SecondsSince(started));
  return absl::OkStatus();
}

// The encoder-decoder protocol: sentence pairs (seq2seq_perplexity.h).
absl::Status RunPairs(const PerplexityOptions& options, LanguageModel& model,
                      const std::vector<SentencePair>& pairs, Clock::time_point started) {
  if (model.seq2seq() == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(options.model_dir,
                     " is a decoder-only model: give --ids and --window, not "
                     "--source-ids/--target-ids"));
  }
  SLOTSERVE_ASSIGN_OR_RETURN(const PairTotals totals,
                             ScoreSentencePairs(model, pairs, options.max_tokens));
  std::cout << absl::StrFormat(
      "{\"attention\": \"%s\", \"cross_attention\": \"%s\", \"tokens\": %d, "
      "\"pairs\": %d, \"nll\": %.6f, \"perplexity\": %.6f, "
      "\"state_bytes_per_request\": %d, \"backend\": \"%s\", \"seconds\": %.2f}\n",
      AttentionKindName(model.config().attention.kind), model.seq2seq()->cross_kind, totals.tokens,
      totals.pairs, totals.nll, std::exp(totals.nll / static_cast<double>(totals.tokens)),
      model.state_bytes_per_request(), kernels::BackendName(options.backend),
      SecondsSince(started));
  return absl::OkStatus();
}

absl::Status Run(const PerplexityOptions& options) {
  const Clock::time_point started = Clock::now();
  // The inputs are read first, so a bad file fails before a model loads.
  std::vector<std::vector<int32_t>> books;
  std::vector<SentencePair> pairs;
  const bool scoring_pairs = !options.source_ids_file.empty();
  if (scoring_pairs) {
    SLOTSERVE_ASSIGN_OR_RETURN(pairs,
                               ReadSentencePairs(options.source_ids_file, options.target_ids_file));
  } else {
    SLOTSERVE_ASSIGN_OR_RETURN(books, ReadBooks(options.ids_file));
  }
  SetInt8Activations(options.int8_activations);
  SLOTSERVE_ASSIGN_OR_RETURN(std::unique_ptr<LanguageModel> model,
                             LanguageModel::Load(options.model_dir, options.backend,
                                                 {.kv_cache_dtype = options.kv_cache_dtype}));
  if (scoring_pairs) return RunPairs(options, *model, pairs, started);
  return RunWindows(options, *model, books, started);
}

std::string OneLine(const absl::Status& status) {
  return absl::StrReplaceAll(status.message(), {{"\r", " "}, {"\n", " "}});
}

}  // namespace
}  // namespace slotserve::models

int main(int argc, char** argv) {
  using namespace slotserve::models;
  const std::vector<std::string> args(argv, argv + argc);
  if (args.size() == 2 && (args[1] == "--help" || args[1] == "-h")) {
    std::cout << kUsage << "\n";
    return 0;
  }
  auto options = ParseOptions(args);
  if (!options.ok()) {
    std::cerr << "slotserve-perplexity: " << OneLine(options.status()) << " (" << kUsage << ")\n";
    return 2;
  }
  const absl::Status status = Run(*options);
  if (!status.ok()) {
    std::cerr << "slotserve-perplexity: " << OneLine(status) << "\n";
    return 1;
  }
  return 0;
}
