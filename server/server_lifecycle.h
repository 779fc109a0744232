// The server's life: load the model, start the engine, the metrics endpoint and gRPC, log one
// startup line, wait for SIGTERM/SIGINT (rereading --api-keys-file on each SIGHUP), then drain
// (docs/ARCHITECTURE.md "A request's path"): health NOT_SERVING, new requests refused, running ones
// finish within the drain timeout, the rest are cut off.
#pragma once

#include "absl/status/status.h"
#include "server/server_config.h"

namespace slotserve::server {

// Blocks until a shutdown signal has been handled. OK after a clean drain; an error when
// anything failed to start (the message says what and where). The caller must have blocked
// SIGTERM, SIGINT and SIGHUP in every thread (BlockShutdownSignals) before any thread was started.
absl::Status RunServer(const ServerConfig& config);

// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread and the threads it starts later, so
// that RunServer can sigwait for them (SIGHUP would otherwise end the process).
void BlockShutdownSignals();

}  // namespace slotserve::server
