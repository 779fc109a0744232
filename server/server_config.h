// slotserve-server's command line: absl flags, read and checked into one ServerConfig.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/scheduler.h"
#include "kernels/backend.h"
#include "models/kv_cache_dtype.h"
#include "server/http/cors_policy.h"
#include "server/tls_files.h"

namespace slotserve::server {

struct ServerConfig {
  std::string model_dir;
  // --served-model-name; empty: the model directory's name.
  std::string served_model_name;
  std::string listen_address;
  std::string metrics_address;
  std::string http_address;  // --http-listen; empty: no HTTP API
  int http_threads = 128;    // --http-threads: HTTP connections served at once
  http::CorsPolicy cors;     // --allowed-origins, --allowed-methods, --allowed-headers
  kernels::Backend backend = kernels::Backend::kCpu;
  int threads = 0;                // OpenBLAS threads; 0 = OpenBLAS's own default
  bool int8_activations = false;  // --int8-activations (models/int8_activations.h)
  models::KvCacheDtype kv_cache_dtype = models::KvCacheDtype::kF32;  // --kv-cache-dtype
  // --generation-config (vLLM's flag): "auto" = the model directory's generation_config.json
  // gives eos ids and the sampling defaults of requests that set none; "vllm" = it is not read.
  bool use_generation_config = true;
  absl::Duration drain_timeout;
  engine::SchedulerOptions scheduler;
  // --state-memory: the pool's slot count is derived from it once the model's state size is
  // known (SlotsForStateMemory), capped by --max-slots only when that was given too.
  std::optional<int64_t> state_memory_bytes;
  bool max_slots_given = false;
  // --device-sampling was given: deprecated and without effect, it only earns a warning.
  bool device_sampling_given = false;
  // --state-key-file's contents (trailing newline removed): the HMAC key of exported session
  // states; empty = unsigned.
  std::string state_key;
  std::string session_store = "memory";  // --session-store: "memory" or redis://host:port
  // --tls-cert/--tls-key/--tls-client-ca: TLS for gRPC and the HTTP API (not metrics).
  TlsOptions tls;
  // --api-keys-file; empty: no keys asked for.
  std::string api_keys_file;
};

// absl flag names are identifiers (max_slots); the documented spelling is --max-slots. Returns
// argv with the flag names' hyphens turned into underscores (values and everything after a
// bare "--" untouched), for absl::ParseCommandLine.
std::vector<char*> NormalizeFlagSpelling(int argc, char** argv, std::vector<std::string>& storage);

// Parses the command line (exits with a one-line error on an unknown flag or a malformed
// value, as absl does) and checks the values: INVALID_ARGUMENT naming the flag otherwise.
absl::StatusOr<ServerConfig> ParseServerCommandLine(int argc, char** argv);

}  // namespace slotserve::server
