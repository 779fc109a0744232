#include "server/server_config.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string_view>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/flag_help.h"
#include "base/status_macros.h"
#include "server/redis_session_store.h"
#include "server/state_memory_budget.h"

// The bundled default models, in order of preference (set by CMake): the trained demo model
// once it is committed (issue 5), else the random-weight one scripts/make-default-model.sh
// writes into the build tree.
#ifndef SLOTSERVE_TRAINED_MODEL_DIR
#define SLOTSERVE_TRAINED_MODEL_DIR "models/trained/kjv-abc-m32"
#endif
#ifndef SLOTSERVE_DEFAULT_MODEL_DIR
#define SLOTSERVE_DEFAULT_MODEL_DIR "build/default-model"
#endif

ABSL_FLAG(std::string, model, "",
          "Model directory (config.json, model.safetensors, tokenizer.model); "
          "default: " SLOTSERVE_TRAINED_MODEL_DIR
          " when it exists, else " SLOTSERVE_DEFAULT_MODEL_DIR
          " (written by scripts/make-default-model.sh)");
ABSL_FLAG(std::string, served_model_name, "",
          "The model's name in the APIs (GET /v1/models, the \"model\" field requests must "
          "match, GetModelInfo, the build_info metric); default: the model directory's name");
ABSL_FLAG(std::string, generation_config, "auto",
          "auto: the model directory's generation_config.json, when present, adds its "
          "eos_token_id list to the ids that end generation and gives its temperature, top_k, "
          "top_p, min_p and repetition_penalty (do_sample false: greedy) to requests that set "
          "none; vllm: the file is not read (the built-in defaults), as vLLM names it");
ABSL_FLAG(std::string, listen, "0.0.0.0:50051",
          "gRPC address to listen on (port 0 picks a free port; the startup line shows it)");
ABSL_FLAG(std::string, metrics_listen, "0.0.0.0:9464",
          "Address of the Prometheus metrics HTTP endpoint (/metrics); port 0 picks one");
ABSL_FLAG(std::string, http_listen, "",
          "Address of the OpenAI-compatible HTTP API (/v1/completions, /v1/chat/completions, "
          "/v1/models, /health, /metrics), e.g. 0.0.0.0:8000; port 0 picks one; empty: off");
ABSL_FLAG(int, http_threads, 128,
          "HTTP connections served at once (one thread each; a streaming response holds its "
          "thread until it ends); more wait until one is free");
ABSL_FLAG(std::string, allowed_origins, "",
          "Origins whose browser pages may call the HTTP API (CORS), comma-separated, e.g. "
          "https://app.example.com; \"*\" allows any; empty (the default): no CORS headers");
ABSL_FLAG(std::string, allowed_methods, "*",
          "Methods a CORS preflight is told are allowed, comma-separated; \"*\": each route's "
          "own");
ABSL_FLAG(std::string, allowed_headers, "*",
          "Request headers a CORS preflight is told are allowed, comma-separated; \"*\": those "
          "the preflight asks for (Authorization included)");
ABSL_FLAG(std::string, backend, "auto",
          "auto, cpu, cuda or reference; auto = cuda when a CUDA device is usable, else cpu");
ABSL_FLAG(int, max_slots, 64,
          "State slots in the pool = most requests running at once (with --state-memory: an "
          "upper bound on the slots it derives)");
ABSL_FLAG(int, max_cross_memories, 0,
          "Encoder-decoder models: cross memories in the state pool = most requests holding a "
          "source at once (a request's beams and choices share one); 0 = one per state slot. "
          "Fewer saves memory when requests fork (beam search, n > 1)");
ABSL_FLAG(std::string, state_memory, "",
          "Memory for the state pool, e.g. 16GiB or 512MiB; the pool gets as many slots as fit "
          "(state bytes per request depend on the model; one state is the padding slot). "
          "Replaces the --max-slots default of 64");
ABSL_FLAG(int, max_queued, 256,
          "Requests that may wait for a slot; beyond it new requests get RESOURCE_EXHAUSTED");
ABSL_FLAG(int, token_budget, 512, "Tokens (decode + prefill) one engine step aims to stay within");
ABSL_FLAG(int, prefill_chunk, 256, "Most prompt tokens of one request fed in one model call");
ABSL_FLAG(std::string, max_step_latency, "auto",
          "How long an engine step that decodes may take: prompt tokens fed beside running "
          "streams are cut to stay within it, costed by the measured prefill time per token. "
          "auto = 3x the running median decode step, off = no cap, or a duration such as 20ms");
ABSL_FLAG(std::string, device_sampling, "",
          "Deprecated, no effect (a warning at start-up when given, whatever its value): every "
          "token is selected by the sampling op where the model's logits are (on the GPU for "
          "cuda), so only token ids cross to the host");
ABSL_FLAG(int, prefix_block, 64,
          "Prefix states: checkpoint prompts every this many tokens and start a new prompt from "
          "the longest cached block-aligned prefix (prefill chunks then never cross a block "
          "boundary); 0 = off");
ABSL_FLAG(std::string, prefix_cache_memory, "256MiB",
          "Host memory for prefix states, e.g. 256MiB or 2GiB (LRU); 0 = off");
ABSL_FLAG(int, max_n, 16,
          "Most choices (GenerateRequest.n) one request may ask for; each holds a state slot");
ABSL_FLAG(int, max_beam_width, 8,
          "Widest beam search (GenerateRequest.beam.width) one request may ask for; each "
          "hypothesis holds a state slot, so it is also capped by the slots");
ABSL_FLAG(absl::Duration, session_ttl, absl::Minutes(30),
          "Sessions: how long a kept state lives since it was last stored or used (e.g. 30m)");
ABSL_FLAG(std::string, session_memory, "1GiB",
          "Sessions: host memory for kept states, e.g. 1GiB (least recently used out first)");
ABSL_FLAG(std::string, session_store, "memory",
          "Where sessions live: \"memory\" (this process; the default) or redis://host:port "
          "(shared by every replica pointed at it, so any replica can continue any session)");
ABSL_FLAG(std::string, state_key_file, "",
          "File holding the key (at least 16 bytes; one trailing newline is ignored) that signs "
          "exported session states with HMAC-SHA256 and that imports must verify; a file, not "
          "a flag value, so the key stays out of process listings. Empty: unsigned states");
ABSL_FLAG(int, threads, 0,
          "Compute threads for the cpu backend: OpenBLAS's and the engine's own (16-bit "
          "linear layers, attention steps); 0 = one per core this process may run on");
ABSL_FLAG(bool, int8_activations, false,
          "int8 models, cpu backend: quantise each linear layer's input to int8 (blocks of 32, "
          "as llama.cpp's Q8_0) and multiply int8 by int8; faster decoding, logits carry the "
          "inputs' rounding too (off: exact dequantised weights). No effect on other models");
ABSL_FLAG(std::string, kv_cache_dtype, "f32",
          "Softmax models: what the KV cache holds, f32 or f16 (half the state per request and "
          "half the bytes a decode step reads; attention arithmetic stays f32). Other kinds "
          "keep their constant-size state in f32 and refuse f16");
ABSL_FLAG(absl::Duration, drain_timeout, absl::Seconds(30),
          "On SIGTERM/SIGINT, how long running requests may take to finish (e.g. 30s, 500ms)");
ABSL_FLAG(int, max_new_tokens_limit, 4096, "Largest max_new_tokens a request may ask for");
ABSL_FLAG(int, default_max_new_tokens, 128, "max_new_tokens of requests that set none");
ABSL_FLAG(int, max_prompt_tokens, 8192, "Longest prompt accepted, in tokens");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM certificate chain (the server's certificate first): serve gRPC and the HTTP API "
          "over TLS; needs --tls-key. The metrics listener stays plain HTTP");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls-cert (unencrypted)");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA certificate(s): require every gRPC and HTTP API client to present a "
          "certificate signed by one of them (mutual TLS); needs --tls-cert");
ABSL_FLAG(std::string, api_keys_file, "",
          "File of API keys, one per line (blank lines and # comments ignored), reread on "
          "SIGHUP: every slotserve.v1 call and HTTP /v1/ request must then send "
          "'authorization: Bearer <key>'; health stays open");

namespace slotserve::server {
namespace {

absl::StatusOr<kernels::Backend> ParseBackend(const std::string& name) {
  if (name == "cpu") return kernels::Backend::kCpu;
  if (name == "reference") return kernels::Backend::kReference;
  if (name == "cuda" || name == "auto") {
    const kernels::CudaProbe probe = kernels::ProbeCudaDevice();
    if (probe.state == kernels::CudaDeviceState::kUsable) return kernels::Backend::kCuda;
    // A GPU the runtime cannot use is an error under auto too, never a quiet CPU fallback: a
    // GPU machine serving from its CPU is many times slower and nobody would know why. The
    // operator who wants the CPU there says --backend=cpu.
    if (probe.state == kernels::CudaDeviceState::kUnusable) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--backend=", name, ": a CUDA device is present but unusable: ", probe.detail,
          " (fix the driver, or pass --backend=cpu to serve from the "
          "CPU on purpose)"));
    }
    if (name == "auto") return kernels::Backend::kCpu;
    return absl::InvalidArgumentError(
        kernels::CudaCompiledIn()
            ? absl::StrCat("--backend=cuda: no usable CUDA device found (", probe.detail, ")")
            : "--backend=cuda: this build has no CUDA backend (built with "
              "SLOTSERVE_WITH_CUDA=OFF)");
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--backend must be auto, cpu, cuda or reference, got \"", name, "\""));
}

absl::StatusOr<std::string> BundledModelDir() {
  for (const char* candidate : {SLOTSERVE_TRAINED_MODEL_DIR, SLOTSERVE_DEFAULT_MODEL_DIR}) {
    if (std::filesystem::exists(std::filesystem::path(candidate) / "config.json")) {
      return std::string(candidate);
    }
  }
  return absl::NotFoundError(
      absl::StrCat("no --model given and no bundled default model: looked for config.json in ",
                   SLOTSERVE_TRAINED_MODEL_DIR, " and ", SLOTSERVE_DEFAULT_MODEL_DIR,
                   "; run scripts/make-default-model.sh or pass --model DIR"));
}

// Any name a client can send back in a JSON string and see in a metric label: printable ASCII
// without spaces (so "org/model-v2" passes), at most 256 characters.
absl::Status CheckServedModelName(const std::string& name) {
  const bool printable =
      std::all_of(name.begin(), name.end(), [](char c) { return c > ' ' && c <= '~'; });
  if (!printable || name.size() > 256) {
    return absl::InvalidArgumentError(
        absl::StrCat("--served-model-name must be at most 256 printable ASCII characters "
                     "without spaces, got \"",
                     absl::CHexEscape(name), "\""));
  }
  return absl::OkStatus();
}

// Whether argv (after NormalizeFlagSpelling) sets flag `name`: this absl's CommandLineFlag
// keeps IsSpecifiedOnCommandLine() private.
bool FlagGiven(const std::vector<char*>& normalized, absl::string_view name) {
  for (const char* arg : normalized) {
    if (arg == nullptr) break;
    const absl::string_view view(arg);
    if (view == "--") break;
    const absl::string_view flag = absl::StripPrefix(absl::StripPrefix(view, "-"), "-");
    if (flag == name || absl::StartsWith(flag, absl::StrCat(name, "="))) return true;
  }
  return false;
}

// A byte size flag where "0" means off.
absl::StatusOr<int64_t> ParseOptionalByteSize(absl::string_view flag, absl::string_view text) {
  if (text == "0") return 0;
  absl::StatusOr<int64_t> bytes = ParseByteSize(text);
  if (!bytes.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(flag, ": ", bytes.status().message()));
  }
  return *bytes;
}

// The key in --state-key-file ("" when no file is given).
absl::StatusOr<std::string> ReadStateKey(const std::string& path) {
  if (path.empty()) return std::string();
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat("--state-key-file=", path, ": cannot read"));
  std::string key((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (absl::EndsWith(key, "\n")) key.pop_back();
  if (absl::EndsWith(key, "\r")) key.pop_back();
  if (key.size() < 16) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--state-key-file=", path, ": the key must have at least 16 bytes, got ", key.size()));
  }
  return key;
}

bool IsServerFlagFile(absl::string_view file) {
  return absl::StrContains(file, "server_config.cc");
}

// A bare boolean flag (--int8-activations, --nofoo) gets its value spelled out (=true,
// =false). absl's parser recognises booleans by comparing type ids, and the server's are hidden
// from libabsl_flags_parse.so by the -Wl,--exclude-libs,ALL of server/CMakeLists.txt (needed for
// protobuf), so without this it would take the next argument as the flag's value.
void SpellOutBoolValue(std::string& arg, size_t name_begin) {
  const std::string name = arg.substr(name_begin);
  const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
  if (flag != nullptr && flag->IsOfType<bool>()) {
    arg += "=true";
    return;
  }
  if (name.rfind("no", 0) != 0) return;
  flag = absl::FindCommandLineFlag(name.substr(2));
  if (flag != nullptr && flag->IsOfType<bool>())
    arg = arg.substr(0, name_begin) + name.substr(2) + "=false";
}

}  // namespace

std::vector<char*> NormalizeFlagSpelling(int argc, char** argv, std::vector<std::string>& storage) {
  storage.assign(argv, argv + argc);
  for (int i = 1; i < argc; ++i) {
    std::string& arg = storage[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-') continue;
    const size_t name_end = std::min(arg.find('='), arg.size());
    const size_t name_begin = arg.find_first_not_of('-');
    if (name_begin == std::string::npos) continue;
    std::replace(arg.begin() + name_begin, arg.begin() + name_end, '-', '_');
    if (name_end == arg.size()) SpellOutBoolValue(arg, name_begin);
  }
  std::vector<char*> normalized;
  for (std::string& arg : storage) normalized.push_back(arg.data());
  normalized.push_back(nullptr);
  return normalized;
}

constexpr char kServerUsage[] =
    "slotserve-server [--model DIR] [--listen ADDR] [--metrics-listen ADDR] "
    "[--http-listen ADDR] [flags]\n"
    "Serves a slotserve model over gRPC (slotserve.v1), and with --http-listen over an\n"
    "OpenAI-compatible HTTP API, with continuous batching.\n"
    "Flags may be written --max-slots or --max_slots.";

absl::StatusOr<ServerConfig> ParseServerCommandLine(int argc, char** argv) {
  if (base::HelpRequested(argc, argv)) {
    std::fputs(base::FlagHelp(kServerUsage, IsServerFlagFile).c_str(), stdout);
    std::exit(0);
  }
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = IsServerFlagFile;
  usage.contains_helpshort_flags = IsServerFlagFile;
  absl::SetFlagsUsageConfig(usage);
  absl::SetProgramUsageMessage(kServerUsage);
  std::vector<std::string> storage;
  std::vector<char*> normalized = NormalizeFlagSpelling(argc, argv, storage);
  std::vector<char*> positional = absl::ParseCommandLine(argc, normalized.data());
  if (positional.size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat("unexpected argument \"", positional[1],
                                                   "\"; every setting is a --flag (see --help)"));
  }

  ServerConfig config;
  config.model_dir = absl::GetFlag(FLAGS_model);
  if (config.model_dir.empty()) {
    SLOTSERVE_ASSIGN_OR_RETURN(config.model_dir, BundledModelDir());
  }
  config.served_model_name = absl::GetFlag(FLAGS_served_model_name);
  SLOTSERVE_RETURN_IF_ERROR(CheckServedModelName(config.served_model_name));
  const std::string generation_config = absl::GetFlag(FLAGS_generation_config);
  if (generation_config != "auto" && generation_config != "vllm") {
    return absl::InvalidArgumentError(
        absl::StrCat("--generation-config must be auto or vllm, got \"", generation_config, "\""));
  }
  config.use_generation_config = generation_config == "auto";
  config.listen_address = absl::GetFlag(FLAGS_listen);
  config.metrics_address = absl::GetFlag(FLAGS_metrics_listen);
  config.http_address = absl::GetFlag(FLAGS_http_listen);
  config.http_threads = absl::GetFlag(FLAGS_http_threads);
  if (config.http_threads < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--http-threads must be >= 1, got ", config.http_threads));
  }
  SLOTSERVE_ASSIGN_OR_RETURN(config.cors,
                             http::ParseCorsPolicy(absl::GetFlag(FLAGS_allowed_origins),
                                                   absl::GetFlag(FLAGS_allowed_methods),
                                                   absl::GetFlag(FLAGS_allowed_headers)));
  SLOTSERVE_ASSIGN_OR_RETURN(config.backend, ParseBackend(absl::GetFlag(FLAGS_backend)));
  config.threads = absl::GetFlag(FLAGS_threads);
  if (config.threads < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--threads must be >= 0 (0 = OpenBLAS's default), got ", config.threads));
  }
  config.int8_activations = absl::GetFlag(FLAGS_int8_activations);
  if (config.int8_activations && config.backend == kernels::Backend::kCuda) {
    return absl::InvalidArgumentError(
        "--int8-activations is implemented by the cpu and reference backends, not by "
        "--backend=cuda (its int8 kernels keep the activations F32)");
  }
  absl::StatusOr<models::KvCacheDtype> kv_cache_dtype =
      models::ParseKvCacheDtype(absl::GetFlag(FLAGS_kv_cache_dtype));
  if (!kv_cache_dtype.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--kv-cache-dtype ", kv_cache_dtype.status().message()));
  }
  config.kv_cache_dtype = *kv_cache_dtype;
  config.drain_timeout = absl::GetFlag(FLAGS_drain_timeout);
  if (config.drain_timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat("--drain-timeout must be >= 0, got ",
                                                   absl::FormatDuration(config.drain_timeout)));
  }
  if (config.listen_address.empty() || config.metrics_address.empty()) {
    return absl::InvalidArgumentError("--listen and --metrics-listen must be host:port addresses");
  }
  config.tls = {absl::GetFlag(FLAGS_tls_cert), absl::GetFlag(FLAGS_tls_key),
                absl::GetFlag(FLAGS_tls_client_ca)};
  if (config.tls.cert_path.empty() != config.tls.key_path.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key must be given together");
  }
  if (!config.tls.client_ca_path.empty() && config.tls.cert_path.empty()) {
    return absl::InvalidArgumentError(
        "--tls-client-ca needs --tls-cert and --tls-key (mutual TLS is TLS first)");
  }
  config.api_keys_file = absl::GetFlag(FLAGS_api_keys_file);
  engine::SchedulerOptions& scheduler = config.scheduler;
  scheduler.max_slots = absl::GetFlag(FLAGS_max_slots);
  config.max_slots_given = FlagGiven(normalized, "max_slots");
  if (const std::string budget = absl::GetFlag(FLAGS_state_memory); !budget.empty()) {
    absl::StatusOr<int64_t> bytes = ParseByteSize(budget);
    if (!bytes.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--state-memory: ", bytes.status().message()));
    }
    config.state_memory_bytes = *bytes;
  }
  config.device_sampling_given = FlagGiven(normalized, "device_sampling");
  scheduler.max_queued = absl::GetFlag(FLAGS_max_queued);
  scheduler.token_budget = absl::GetFlag(FLAGS_token_budget);
  scheduler.prefill_chunk = absl::GetFlag(FLAGS_prefill_chunk);
  if (std::string error; !engine::ParseStepLatencyTarget(absl::GetFlag(FLAGS_max_step_latency),
                                                         &scheduler.max_step_latency, &error)) {
    return absl::InvalidArgumentError(absl::StrCat("--max-step-latency ", error));
  }
  scheduler.max_new_tokens_limit = absl::GetFlag(FLAGS_max_new_tokens_limit);
  scheduler.default_max_new_tokens = absl::GetFlag(FLAGS_default_max_new_tokens);
  scheduler.max_prompt_tokens = absl::GetFlag(FLAGS_max_prompt_tokens);
  scheduler.max_n = absl::GetFlag(FLAGS_max_n);
  scheduler.max_beam_width = absl::GetFlag(FLAGS_max_beam_width);
  scheduler.max_cross_memories = absl::GetFlag(FLAGS_max_cross_memories);
  SLOTSERVE_ASSIGN_OR_RETURN(config.state_key, ReadStateKey(absl::GetFlag(FLAGS_state_key_file)));
  scheduler.session_ttl = absl::GetFlag(FLAGS_session_ttl);
  if (scheduler.session_ttl <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat("--session-ttl must be > 0, got ",
                                                   absl::FormatDuration(scheduler.session_ttl)));
  }
  SLOTSERVE_ASSIGN_OR_RETURN(
      scheduler.session_memory_bytes,
      ParseOptionalByteSize("--session-memory", absl::GetFlag(FLAGS_session_memory)));
  config.session_store = absl::GetFlag(FLAGS_session_store);
  if (config.session_store != "memory") {
    SLOTSERVE_RETURN_IF_ERROR(ParseRedisAddress(config.session_store).status());
  }
  scheduler.prefix_block = absl::GetFlag(FLAGS_prefix_block);
  if (scheduler.prefix_block < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--prefix-block must be >= 0 (0 = off), got ", scheduler.prefix_block));
  }
  SLOTSERVE_ASSIGN_OR_RETURN(
      scheduler.prefix_cache_bytes,
      ParseOptionalByteSize("--prefix-cache-memory", absl::GetFlag(FLAGS_prefix_cache_memory)));
  if (absl::Status valid = scheduler.Validate(); !valid.ok()) {
    // The scheduler names its own fields ("max_slots must be > 0"); name the flag instead.
    std::string message(valid.message());
    const size_t name_end = message.find(' ');
    std::replace(message.begin(), message.begin() + std::min(name_end, message.size()), '_', '-');
    return absl::InvalidArgumentError(absl::StrCat("--", message));
  }
  return config;
}

}  // namespace slotserve::server
