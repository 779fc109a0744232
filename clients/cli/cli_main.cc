// slotserve-cli: a command-line client for slotserve-server (slotserve.v1 over gRPC).
//
//   slotserve-cli [--server ADDR] generate "prompt"     stream a completion as it arrives
//   slotserve-cli complete "prompt"                      the same, whole text at once (unary)
//   slotserve-cli translate --source "text" ["prefix"]  stream an encoder-decoder model's output
//   slotserve-cli info | health | tokenize "text"
//   slotserve-cli export-session HANDLE > state.bin;  slotserve-cli import-session state.bin
//
// A prompt of "-" is read from stdin. Exit status: 0 success, 1 the server could not be
// reached or refused, 2 a usage error.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "base/flag_help.h"
#include "clients/cli/commands.h"
#include "clients/cli/connection_flags.h"
#include "clients/cli/request_flags.h"
#include "clients/cli/source_flags.h"

ABSL_FLAG(std::string, server, "localhost:50051", "slotserve-server's gRPC address");
ABSL_FLAG(std::optional<absl::Duration>, timeout, std::nullopt,
          "Deadline of each RPC, e.g. 30s (default: none for generate/complete, 10s otherwise)");
ABSL_FLAG(bool, json, false, "Print each server message as one JSON object per line");
ABSL_FLAG(bool, quiet, false, "No summary line on stderr after a completion");

namespace {

constexpr char kUsage[] =
    "slotserve-cli [--server ADDR] COMMAND [flags] [ARG]\n"
    "\n"
    "  generate PROMPT   stream a completion to stdout as it arrives (PROMPT - reads stdin)\n"
    "  complete PROMPT   the same through the unary Complete RPC\n"
    "  translate --source TEXT | --source-ids IDS [PREFIX]   stream an encoder-decoder\n"
    "                    model's translation of the source (PREFIX: target text it starts with)\n"
    "  info              the model, its attention memory and the state-slot pool\n"
    "  health            SERVING or NOT_SERVING (exit 0 only when SERVING)\n"
    "  tokenize TEXT     token ids and pieces of TEXT\n"
    "  export-session HANDLE   a kept session's state, as bytes on stdout\n"
    "  import-session FILE     a state from export-session (FILE - reads stdin) as a new\n"
    "                          session here; prints its handle\n"
    "\n"
    "Flags may be written --max-new-tokens or --max_new_tokens. Sampling flags:\n"
    "--temperature --top-k --top-p --min-p --repetition-penalty --presence-penalty\n"
    "--frequency-penalty --logit-bias ID:BIAS,... --seed --max-new-tokens --min-new-tokens\n"
    "--stop --stop-token-ids --ignore-eos --logprobs N --token-ids --n N. Sessions: --keep-session "
    "(the summary\n"
    "names the handle), --session HANDLE (continue it). Beam search: --beam N [--n-best K]\n"
    "[--length-penalty A] prints the n-best with their scores. Connection: --tls-ca FILE (TLS),\n"
    "--tls-cert/"
    "--tls-key (client certificate), --tls-server-name, --api-key KEY (or\n"
    "$SLOTSERVE_API_KEY); see --help for all.";

bool IsCliFlagFile(absl::string_view file) { return absl::StrContains(file, "clients/cli/"); }

// absl flag names are identifiers (max_new_tokens); accept --max-new-tokens too. Only flag
// names change: values and everything after a bare "--" stay as typed.
std::vector<char*> NormalizeFlagSpelling(int argc, char** argv, std::vector<std::string>& storage) {
  storage.assign(argv, argv + argc);
  for (int i = 1; i < argc; ++i) {
    std::string& arg = storage[i];
    if (arg == "--") break;
    if (arg.size() < 3 || arg[0] != '-') continue;
    const size_t name_begin = arg.find_first_not_of('-');
    const size_t name_end = std::min(arg.find('='), arg.size());
    if (name_begin == std::string::npos || name_begin > 2) continue;
    std::replace(arg.begin() + name_begin, arg.begin() + name_end, '-', '_');
  }
  std::vector<char*> normalized;
  for (std::string& arg : storage) normalized.push_back(arg.data());
  normalized.push_back(nullptr);
  return normalized;
}

int UsageError(const std::string& message) {
  std::fprintf(stderr, "slotserve-cli: %s\n\n%s\n", message.c_str(), kUsage);
  return 2;
}

std::string ReadArgument(const std::string& argument) {
  if (argument != "-") return argument;
  return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
}

// The bytes of FILE, or of stdin for "-".
absl::StatusOr<std::string> ReadFileArgument(const std::string& path) {
  if (path == "-") {
    return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError("cannot open \"" + path + "\"");
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

}  // namespace

int main(int argc, char** argv) {
  if (slotserve::base::HelpRequested(argc, argv)) {
    std::fputs(slotserve::base::FlagHelp(kUsage, IsCliFlagFile).c_str(), stdout);
    return 0;
  }
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = IsCliFlagFile;
  usage.contains_helpshort_flags = IsCliFlagFile;
  absl::SetFlagsUsageConfig(usage);
  absl::SetProgramUsageMessage(kUsage);
  std::vector<std::string> storage;
  std::vector<char*> normalized = NormalizeFlagSpelling(argc, argv, storage);
  std::vector<char*> args = absl::ParseCommandLine(argc, normalized.data());
  if (args.size() < 2) return UsageError("no command given");
  const std::string command = args[1];
  std::vector<std::string> rest(args.begin() + 2, args.end());

  namespace clients = slotserve::clients;
  clients::CliContext context;
  context.server = absl::GetFlag(FLAGS_server);
  context.json = absl::GetFlag(FLAGS_json);
  context.quiet = absl::GetFlag(FLAGS_quiet);
  const bool generates = command == "generate" || command == "complete" || command == "translate";
  context.timeout =
      absl::GetFlag(FLAGS_timeout).value_or(generates ? absl::ZeroDuration() : absl::Seconds(10));
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      clients::ChannelFromFlags(context.server);
  if (!channel.ok()) return UsageError(std::string(channel.status().message()));
  context.channel = *std::move(channel);
  context.api_key = clients::ApiKeyFromFlags();

  if (command == "translate") {
    if (!clients::SourceGiven()) return UsageError("translate needs --source or --source-ids");
    if (rest.size() > 1) return UsageError("translate takes at most one PREFIX argument");
    return clients::RunGenerate(context, rest.empty() ? "" : ReadArgument(rest[0]));
  }
  if (generates) {
    std::string prompt;
    if (clients::PromptGivenAsTokenIds()) {
      if (!rest.empty()) return UsageError("give either a prompt or --token-ids, not both");
    } else {
      if (rest.size() != 1) return UsageError(command + " takes one PROMPT argument (or -)");
      prompt = ReadArgument(rest[0]);
    }
    return command == "generate" ? clients::RunGenerate(context, prompt)
                                 : clients::RunComplete(context, prompt);
  }
  if (command == "tokenize") {
    if (rest.size() != 1) return UsageError("tokenize takes one TEXT argument (or -)");
    return clients::RunTokenize(context, ReadArgument(rest[0]));
  }
  if (command == "export-session") {
    if (rest.size() != 1) return UsageError("export-session takes one HANDLE argument");
    return clients::RunExportSession(context, rest[0]);
  }
  if (command == "import-session") {
    if (rest.size() != 1) return UsageError("import-session takes one FILE argument (or -)");
    absl::StatusOr<std::string> state = ReadFileArgument(rest[0]);
    if (!state.ok()) return UsageError(std::string(state.status().message()));
    return clients::RunImportSession(context, *state);
  }
  if (!rest.empty()) return UsageError(command + " takes no arguments");
  if (command == "info") return clients::RunInfo(context);
  if (command == "health") return clients::RunHealth(context);
  return UsageError("unknown command \"" + command + "\"");
}
