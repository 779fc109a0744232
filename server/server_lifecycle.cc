#include "server/server_lifecycle.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "base/compute_threads.h"
#include "base/status_macros.h"
#include "engine/sampling_defaults.h"
#include "engine/scheduler.h"
#include "engine/tokenizer.h"
#include "grpc/health/v1/health.pb.h"
#include "kernels/int8_packed_weights.h"
#include "models/attention_kind.h"
#include "models/fla_config.h"
#include "models/generation_config.h"
#include "models/int8_activations.h"
#include "models/language_model.h"
#include "models/model_fingerprint.h"
#include "server/api_keys.h"
#include "server/grpc/grpc_credentials.h"
#include "server/grpc/model_info.h"
#include "server/grpc/reflection_v1_service.h"
#include "server/grpc/session_transfer.h"
#include "server/grpc/slotserve_service.h"
#include "server/http/http_front_end.h"
#include "server/http/jinja_chat_template.h"
#include "server/http/metrics_route.h"
#include "server/redis_session_store.h"
#include "server/server_metrics.h"
#include "server/state_memory_budget.h"
#include "server/system_fingerprint.h"
#include "server/tls_files.h"

#ifndef SLOTSERVE_VERSION
#define SLOTSERVE_VERSION "unknown"
#endif

namespace slotserve::server {
namespace {

// SIGTERM and SIGINT end the server; SIGHUP rereads --api-keys-file.
sigset_t HandledSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  return signals;
}

// Rereads the key file (SIGHUP). A file that cannot be used leaves the old keys in force: an
// operator's typo must not lock every client out, nor let everyone in.
void ReloadApiKeys(ApiKeyStore* api_keys) {
  if (api_keys == nullptr) {
    std::fprintf(stderr, "slotserve-server: SIGHUP: no --api-keys-file to reload, ignored\n");
    return;
  }
  absl::StatusOr<int> reloaded = api_keys->Reload();
  if (reloaded.ok()) {
    std::fprintf(stderr, "slotserve-server: SIGHUP: reloaded %d API keys from %s\n", *reloaded,
                 api_keys->path().c_str());
  } else {
    std::fprintf(stderr, "slotserve-server: SIGHUP: keeping the %d API keys in force: %s\n",
                 api_keys->size(), std::string(reloaded.status().message()).c_str());
  }
  std::fflush(stderr);
}

// Returns the shutdown signal; SIGHUPs before it reload `api_keys` (may be null).
int WaitForShutdownSignal(ApiKeyStore* api_keys) {
  sigset_t signals = HandledSignals();
  while (true) {
    int signal_number = 0;
    if (sigwait(&signals, &signal_number) != 0) continue;
    if (signal_number != SIGHUP) return signal_number;
    ReloadApiKeys(api_keys);
  }
}

std::string ModelName(const std::filesystem::path& dir) {
  std::filesystem::path normalized = dir.lexically_normal();
  if (normalized.filename().empty()) normalized = normalized.parent_path();
  return normalized.filename().string();
}

// "host:port" with the port the listener actually got (port 0 asks for a free one).
std::string WithPort(const std::string& address, int port) {
  const size_t colon = address.rfind(':');
  return absl::StrCat(address.substr(0, colon == std::string::npos ? address.size() : colon), ":",
                      port);
}

// Tokenizer of the model directory; null (with a warning) when the directory has none, so
// token-id requests still work.
absl::StatusOr<std::unique_ptr<engine::Tokenizer>> LoadTokenizerIfPresent(
    const std::filesystem::path& model_dir) {
  absl::StatusOr<std::unique_ptr<engine::Tokenizer>> loaded =
      engine::Tokenizer::LoadFromModelDir(model_dir);
  if (absl::IsNotFound(loaded.status())) {
    std::fprintf(stderr, "slotserve-server: warning: %s\n",
                 std::string(loaded.status().message()).c_str());
    return nullptr;
  }
  return loaded;
}

// --generation-config auto: generation_config.json's eos ids and sampling defaults, when the
// directory has one (a start-up line says what it gave).
absl::Status ApplyGenerationConfig(const std::filesystem::path& model_dir, int vocab_size,
                                   engine::SchedulerOptions* options) {
  SLOTSERVE_ASSIGN_OR_RETURN(std::optional<models::GenerationConfig> generation,
                             models::LoadGenerationConfig(model_dir, vocab_size));
  if (!generation.has_value()) return absl::OkStatus();
  options->extra_eos_ids = generation->eos_token_ids;
  options->sampling_defaults = engine::SamplingDefaultsFrom(*generation);
  std::fprintf(stderr,
               "slotserve-server: generation_config.json: eos ids [%s], sampling defaults %s "
               "(--generation-config vllm ignores the file)\n",
               absl::StrJoin(generation->eos_token_ids, ", ").c_str(),
               engine::DescribeSamplingDefaults(options->sampling_defaults).c_str());
  return absl::OkStatus();
}

// The largest message the server takes: gRPC's usual 4 MiB, or room for one exported state
// (the state, its header and its HMAC) when that is larger.
int64_t MaxGrpcMessageBytes(int64_t state_bytes) {
  return std::max<int64_t>(int64_t{4} << 20, state_bytes + (int64_t{1} << 20));
}

// gRPC serving `service`, the standard health service and server reflection (v1alpha from
// gRPC, v1 from us). *port gets the port actually bound.
// With `tls`, over TLS (mutual when it has a client CA). Messages up to `max_message_bytes`
// are accepted (ImportSession carries a whole state: a softmax model's is past gRPC's 4 MiB).
absl::StatusOr<std::unique_ptr<grpc::Server>> StartGrpcServer(const std::string& address,
                                                              const TlsFiles* tls,
                                                              grpc::Service* service,
                                                              int64_t max_message_bytes,
                                                              int* port) {
  grpc::EnableDefaultHealthCheckService(true);
  // gRPC's health service speaks the protocol without our generated health.pb.cc, so nothing
  // referenced that object and the linker left it out of libslotserve_proto.a's users: its
  // descriptor never reached the generated pool, and reflection listed grpc.health.v1.Health
  // but answered NOT_FOUND when asked to describe it (issue 57). Naming the descriptor links
  // the file in and registers it.
  grpc::health::v1::HealthCheckRequest::descriptor();
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.SetOption(ReflectionV1Option());
  builder.SetMaxReceiveMessageSize(
      static_cast<int>(std::min<int64_t>(max_message_bytes, std::numeric_limits<int>::max())));
  builder.AddListeningPort(
      address, tls != nullptr ? GrpcServerCredentials(*tls) : grpc::InsecureServerCredentials(),
      port);
  builder.RegisterService(service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || *port == 0) {
    return absl::UnavailableError(
        absl::StrCat("--listen=", address, ": cannot listen there (address in use or invalid?)"));
  }
  // Health checks may name the server ("") or the API's service; both answer, and
  // SetServingStatus(false) on drain flips every registered name at once.
  server->GetHealthCheckService()->SetServingStatus(v1::SlotServe::service_full_name(), true);
  return server;
}

// "TLS, " / "mutual TLS, " / "" for the start-up line.
std::string TlsDescription(const TlsFiles* tls) {
  if (tls == nullptr) return "";
  return tls->client_ca_pem.empty() ? "TLS, " : "mutual TLS, ";
}

// The OpenAI-compatible HTTP API when --http-listen is given (null otherwise), on the same
// scheduler, with the model directory's chat template; its start-up line (printed before the
// main one, which tells a watcher that the server is ready) names its address and the template.
absl::StatusOr<std::unique_ptr<http::HttpFrontEnd>> StartHttpApi(
    const ServerConfig& config, const std::filesystem::path& model_dir,
    engine::Scheduler& scheduler, ServerMetrics& metrics, const std::string& model_name,
    const TlsFiles* tls, const ApiKeyStore* api_keys, const std::string& system_fingerprint) {
  if (config.http_address.empty()) return nullptr;
  SLOTSERVE_ASSIGN_OR_RETURN(http::ChatTemplate chat_template,
                             http::ChatTemplate::LoadFromModelDir(model_dir));
  std::string template_origin = chat_template.origin();
  if (scheduler.tokenizer() != nullptr) chat_template.AddStopsAsWrittenBy(*scheduler.tokenizer());
  http::ServedModel model{model_name, scheduler.tokenizer(), scheduler.model_config().bos_id};
  // The checkpoint's own Jinja template, when the directory has one, replaces the simple one.
  SLOTSERVE_ASSIGN_OR_RETURN(model.jinja_chat_template,
                             http::JinjaChatTemplate::LoadFromModelDir(model_dir));
  model.seq2seq = scheduler.seq2seq() != nullptr;
  model.eos_id = scheduler.model_config().eos_id;
  model.max_prompt_tokens = scheduler.options().max_prompt_tokens;
  model.system_fingerprint = system_fingerprint;
  model.root = ModelName(model_dir);
  model.sampling_defaults = scheduler.options().sampling_defaults;
  model.eos_ids = scheduler.eos_ids();
  model.max_context = scheduler.max_context();
  if (model.jinja_chat_template != nullptr) {
    template_origin = absl::StrCat("Jinja, ", model.jinja_chat_template->origin());
  }
  SLOTSERVE_ASSIGN_OR_RETURN(
      std::unique_ptr<http::HttpFrontEnd> front_end,
      http::HttpFrontEnd::Start(
          {config.http_address, config.http_threads, tls, api_keys, config.cors}, scheduler,
          &metrics, std::move(model), std::move(chat_template), metrics.registry()));
  std::fprintf(stderr,
               "slotserve-server: OpenAI-compatible HTTP API on %s://%s/v1 (chat template: "
               "%s), /health and /metrics beside it, %d connection threads\n",
               tls != nullptr ? "https" : "http",
               WithPort(config.http_address, front_end->port()).c_str(), template_origin.c_str(),
               config.http_threads);
  return front_end;
}

// docs/ARCHITECTURE.md "A request's path" shutdown: NOT_SERVING, refuse new requests, let running
// ones finish within `drain_timeout`, cut off the rest, then stop gRPC and HTTP once every call has
// delivered its end. `http` may be null.
void DrainAndStop(int signal_number, absl::Duration drain_timeout, engine::Scheduler& scheduler,
                  SlotServeService& service, grpc::Server& grpc_server, http::HttpFrontEnd* http) {
  const engine::SchedulerStats at_signal = scheduler.stats();
  std::fprintf(stderr,
               "slotserve-server: %s: draining (%d running, %d queued, up to %s), refusing new "
               "requests\n",
               sigabbrev_np(signal_number), at_signal.running, at_signal.queued,
               absl::FormatDuration(drain_timeout).c_str());
  std::fflush(stderr);
  grpc_server.GetHealthCheckService()->SetServingStatus(false);
  if (http != nullptr) http->BeginDrain();
  scheduler.BeginDrain();
  const bool drained = scheduler.WaitIdle(absl::Now() + drain_timeout);
  const engine::SchedulerStats at_stop = scheduler.stats();
  // Ends whatever is left with UNAVAILABLE, so every call can finish before gRPC shuts down.
  scheduler.Stop();
  // Every call now finishes as soon as its last messages are written. Shutdown's deadline
  // would otherwise be waited out in full while any client keeps an idle connection open.
  const absl::Time calls_deadline = absl::Now() + absl::Seconds(5);
  service.WaitForCallsDone(calls_deadline);
  if (http != nullptr) http->WaitForCallsDone(calls_deadline);
  grpc_server.Shutdown(std::chrono::system_clock::now());
  if (http != nullptr) http->Stop();
  if (drained) {
    std::fprintf(stderr, "slotserve-server: drained, exiting\n");
  } else {
    std::fprintf(stderr,
                 "slotserve-server: drain timeout: cut off %d running and %d queued requests, "
                 "exiting\n",
                 at_stop.running, at_stop.queued);
  }
}

// --session-store: null for "memory" (the scheduler makes its own), else the Redis store. A
// Redis that cannot be reached yet is only a warning: sessions get UNAVAILABLE until it is up,
// and everything else serves (replicas may start before their Redis does).
absl::StatusOr<std::shared_ptr<engine::SessionStore>> MakeSessionStore(
    const ServerConfig& config, const engine::StateBlobIdentity& identity) {
  if (config.session_store == "memory") return nullptr;
  SLOTSERVE_ASSIGN_OR_RETURN(RedisAddress address, ParseRedisAddress(config.session_store));
  auto store = std::make_shared<RedisSessionStore>(
      RedisSessionStoreOptions{.address = std::move(address),
                               .ttl = config.scheduler.session_ttl,
                               .identity = identity,
                               .state_key = config.state_key});
  if (const absl::Status ping = store->Ping(); !ping.ok()) {
    std::fprintf(stderr, "slotserve-server: warning: %s\n", std::string(ping.message()).c_str());
  } else {
    std::fprintf(stderr, "slotserve-server: sessions in %s\n", config.session_store.c_str());
  }
  std::fflush(stderr);
  return store;
}

}  // namespace

void BlockShutdownSignals() {
  sigset_t signals = HandledSignals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
}

absl::Status RunServer(const ServerConfig& config) {
  const std::filesystem::path model_dir(config.model_dir);
  if (!std::filesystem::is_directory(model_dir)) {
    return absl::NotFoundError(absl::StrCat(
        "--model=", config.model_dir,
        ": not a directory (expected config.json, model.safetensors and tokenizer.model; "
        "scripts/make-default-model.sh builds the default one)"));
  }
  if (config.device_sampling_given) {
    std::fprintf(stderr,
                 "slotserve-server: warning: --device-sampling is deprecated and has no effect "
                 "(every token is selected where the model's logits are); remove it\n");
  }
  base::SetComputeThreads(config.threads);
  models::SetInt8Activations(config.int8_activations);
  // Checked before the model loads, so a bad certificate or key file fails fast.
  SLOTSERVE_ASSIGN_OR_RETURN(std::optional<TlsFiles> tls, LoadTlsFiles(config.tls));
  std::unique_ptr<ApiKeyStore> api_keys;
  if (!config.api_keys_file.empty()) {
    SLOTSERVE_ASSIGN_OR_RETURN(api_keys, ApiKeyStore::Load(config.api_keys_file));
  }
  const TlsFiles* tls_files = tls.has_value() ? &*tls : nullptr;

  SLOTSERVE_ASSIGN_OR_RETURN(std::unique_ptr<engine::Tokenizer> tokenizer,
                             LoadTokenizerIfPresent(model_dir));
  SLOTSERVE_ASSIGN_OR_RETURN(
      std::unique_ptr<models::LanguageModel> model,
      models::LanguageModel::Load(model_dir, config.backend,
                                  {.kv_cache_dtype = config.kv_cache_dtype}));
  if (config.int8_activations) {
    std::fprintf(stderr,
                 "slotserve-server: --int8-activations: linear layers with int8 weights quantise "
                 "their inputs to int8 (blocks of 32) and multiply int8 by int8%s\n",
                 kernels::Int8PackedGemmAvailable(config.backend)
                     ? ", over each int8 matrix packed for AVX-512 VNNI at load (in place of "
                       "the row-major copy: no more memory)"
                     : "");
  }
  const int64_t state_bytes = model->state_bytes_per_request();
  const std::string seq2seq_note = DescribeSeq2seqState(model->seq2seq());
  const std::string attention_line = models::DescribeServedAttention(*model);
  const std::string model_name =
      config.served_model_name.empty() ? ModelName(model_dir) : config.served_model_name;
  // What an exported session state must match to be imported here (docs/ARCHITECTURE.md "Request
  // state").
  SLOTSERVE_ASSIGN_OR_RETURN(const base::Digest fingerprint, models::ModelFingerprint(model_dir));
  const engine::StateBlobIdentity blob_identity{
      .model_fingerprint = fingerprint,
      .attention_kind = models::ServedAttentionKind(*model),
      .payload_bytes = static_cast<int64_t>(sizeof(int32_t)) + state_bytes,  // StateArena::Save
      .max_tokens = model->max_positions(),
      .state_dtype = models::StateDtypeCode(model->config()),
      .vocab_size = model->config().vocab_size};
  engine::SchedulerOptions scheduler_options = config.scheduler;
  // An fla model has no position limit of its own: its config's trained context is served,
  // else tokenizer_config.json's model_max_length (HF writes 1e30 for "unknown": 0 here).
  if (const models::FlaConfig* fla = model->fla(); fla != nullptr) {
    if (fla->max_position_embeddings > 0) {
      scheduler_options.max_context_tokens = fla->max_position_embeddings;
    } else if (tokenizer != nullptr && tokenizer->model_max_length() > 0 &&
               tokenizer->model_max_length() <= std::numeric_limits<int32_t>::max()) {
      scheduler_options.max_context_tokens = tokenizer->model_max_length();
    }
  }
  if (config.use_generation_config) {
    SLOTSERVE_RETURN_IF_ERROR(
        ApplyGenerationConfig(model_dir, model->config().vocab_size, &scheduler_options));
  }
  SLOTSERVE_ASSIGN_OR_RETURN(scheduler_options.session_store,
                             MakeSessionStore(config, blob_identity));
  std::string pool_origin = config.max_slots_given ? "--max-slots" : "default --max-slots";
  if (config.state_memory_bytes.has_value()) {
    SLOTSERVE_ASSIGN_OR_RETURN(
        int slots,
        SlotsForStateMemory(*config.state_memory_bytes, state_bytes,
                            config.max_slots_given ? std::optional<int>(config.scheduler.max_slots)
                                                   : std::nullopt));
    scheduler_options.max_slots = slots;
    pool_origin = absl::StrCat("--state-memory=", FormatByteSize(*config.state_memory_bytes),
                               config.max_slots_given ? ", capped by --max-slots" : "");
  }

  ServerMetrics metrics(
      BuildInfo{SLOTSERVE_VERSION, model_name, models::ServedAttentionKind(*model),
                kernels::BackendName(config.backend)},
      scheduler_options.max_slots, state_bytes);
  if (const models::Seq2seqShape* seq2seq = model->seq2seq(); seq2seq != nullptr) {
    metrics.SetStateParts(seq2seq->decoder_state_bytes, seq2seq->cross_memory_bytes);
  }
  if (scheduler_options.prefix_block > 0 && state_bytes > 0) {
    metrics.SetPrefixCacheConfig(scheduler_options.prefix_block,
                                 scheduler_options.prefix_cache_bytes / state_bytes);
  }
  SLOTSERVE_ASSIGN_OR_RETURN(
      std::unique_ptr<engine::Scheduler> scheduler,
      engine::Scheduler::Create(std::move(model), tokenizer.get(), scheduler_options, &metrics));

  SLOTSERVE_ASSIGN_OR_RETURN(
      std::unique_ptr<http::HttpListener> metrics_endpoint,
      http::StartMetricsListener(config.metrics_address, metrics.registry()));

  const SessionTransfer session_transfer(scheduler->sessions(), blob_identity, config.state_key);
  SlotServeService service(*scheduler, &metrics, model_name, &session_transfer, api_keys.get());
  int grpc_port = 0;
  SLOTSERVE_ASSIGN_OR_RETURN(std::unique_ptr<grpc::Server> grpc_server,
                             StartGrpcServer(config.listen_address, tls_files, &service,
                                             MaxGrpcMessageBytes(state_bytes), &grpc_port));
  SLOTSERVE_ASSIGN_OR_RETURN(
      std::unique_ptr<http::HttpFrontEnd> http_api,
      StartHttpApi(
          config, model_dir, *scheduler, metrics, model_name, tls_files, api_keys.get(),
          SystemFingerprint({fingerprint, SLOTSERVE_VERSION, kernels::BackendName(config.backend),
                             models::KvCacheDtypeName(config.kv_cache_dtype),
                             config.int8_activations})));
  scheduler->Start();

  const int metrics_port = metrics_endpoint->port();
  // An encoder-decoder pool is its slots plus its cross memories (fewer when capped).
  int64_t pool_bytes = state_bytes * scheduler_options.max_slots;
  std::string cross_note;
  if (const models::Seq2seqShape* seq2seq = scheduler->seq2seq(); seq2seq != nullptr) {
    const int cross_memories = scheduler_options.max_cross_memories > 0
                                   ? scheduler_options.max_cross_memories
                                   : scheduler_options.max_slots;
    pool_bytes = seq2seq->decoder_state_bytes * scheduler_options.max_slots +
                 seq2seq->cross_memory_bytes * cross_memories;
    cross_note = absl::StrCat(" and ", cross_memories, " cross memories");
  }
  const std::string keys_note =
      api_keys != nullptr ? absl::StrCat(api_keys->size(), " API keys, ") : "";
  std::fprintf(stderr,
               "slotserve-server: model %s (%s), attention %s, backend %s, %lld state bytes per "
               "request%s, %d state slots%s (%.1f MiB, from %s), max step latency %s, "
               "%s%slistening on "
               "%s, metrics on http://%s/metrics\n",
               model_name.c_str(), config.model_dir.c_str(), attention_line.c_str(),
               kernels::BackendName(config.backend), static_cast<long long>(state_bytes),
               seq2seq_note.c_str(), scheduler_options.max_slots, cross_note.c_str(),
               static_cast<double>(pool_bytes) / (1 << 20), pool_origin.c_str(),
               engine::DescribeStepLatencyTarget(scheduler_options.max_step_latency).c_str(),
               TlsDescription(tls_files).c_str(), keys_note.c_str(),
               WithPort(config.listen_address, grpc_port).c_str(),
               WithPort(config.metrics_address, metrics_port).c_str());
  std::fflush(stderr);

  DrainAndStop(WaitForShutdownSignal(api_keys.get()), config.drain_timeout, *scheduler, service,
               *grpc_server, http_api.get());
  return absl::OkStatus();
}

}  // namespace slotserve::server
