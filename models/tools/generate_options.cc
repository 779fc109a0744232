#include "models/tools/generate_options.h"

#include <limits>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "models/tools/command_line.h"

namespace slotserve::models {
namespace {

absl::StatusOr<int64_t> ParseInteger(const std::string& flag, const std::string& text,
                                     int64_t min) {
  int64_t value;
  if (!absl::SimpleAtoi(text, &value) || value > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " expects an integer, got \"", text, "\""));
  }
  if (value < min) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " must be >= ", min, ", got ", value));
  }
  return value;
}

absl::StatusOr<std::vector<int32_t>> ParseIds(const std::string& text) {
  std::vector<int32_t> ids;
  for (const absl::string_view piece : absl::StrSplit(text, ',')) {
    int32_t id;
    if (!absl::SimpleAtoi(piece, &id) || id < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--prompt-ids expects comma-separated non-negative token ids like 5,17,42,"
                       " got \"",
                       text, "\""));
    }
    ids.push_back(id);
  }
  return ids;
}

}  // namespace

absl::StatusOr<GenerateOptions> ParseGenerateOptions(const std::vector<std::string>& args) {
  std::map<std::string, std::string> values;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      GenerateOptions options;
      options.help = true;
      return options;
    }
    if (arg.rfind("--", 0) != 0) {
      return absl::InvalidArgumentError(absl::StrCat("unexpected argument \"", arg, "\""));
    }
    std::string flag = arg;
    std::string value;
    const size_t equals = arg.find('=');
    if (equals != std::string::npos) {
      flag = arg.substr(0, equals);
      value = arg.substr(equals + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return absl::InvalidArgumentError(absl::StrCat(flag, " needs a value"));
    }
    if (flag != "--model" && flag != "--prompt-ids" && flag != "--max-new-tokens" &&
        flag != "--prefill-chunk" && flag != "--dump-logits" && flag != "--backend") {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag ", flag));
    }
    if (!values.emplace(flag, value).second) {
      return absl::InvalidArgumentError(absl::StrCat(flag, " given more than once"));
    }
  }
  for (const char* required : {"--model", "--prompt-ids", "--max-new-tokens"}) {
    if (!values.contains(required)) {
      return absl::InvalidArgumentError(absl::StrCat("missing required flag ", required));
    }
  }

  GenerateOptions options;
  options.model_dir = values["--model"];
  if (options.model_dir.empty()) return absl::InvalidArgumentError("--model needs a directory");
  SLOTSERVE_ASSIGN_OR_RETURN(options.prompt_ids, ParseIds(values["--prompt-ids"]));
  SLOTSERVE_ASSIGN_OR_RETURN(const int64_t max_new_tokens,
                             ParseInteger("--max-new-tokens", values["--max-new-tokens"], 0));
  options.max_new_tokens = static_cast<int>(max_new_tokens);
  if (values.contains("--prefill-chunk")) {
    SLOTSERVE_ASSIGN_OR_RETURN(const int64_t chunk,
                               ParseInteger("--prefill-chunk", values["--prefill-chunk"], 1));
    options.prefill_chunk = static_cast<int>(chunk);
  }
  if (values.contains("--dump-logits")) {
    options.dump_logits = values["--dump-logits"];
    if (options.dump_logits.empty()) {
      return absl::InvalidArgumentError("--dump-logits needs a file name");
    }
  }
  if (values.contains("--backend")) {
    SLOTSERVE_ASSIGN_OR_RETURN(options.backend, ParseBackendFlag(values["--backend"]));
  }
  return options;
}

}  // namespace slotserve::models
