// slotserve-server: see server_lifecycle.h. Exit status 0 after a clean SIGTERM/SIGINT
// drain, 1 with a one-line error when a flag or the model directory is wrong.
#include <cstdio>
#include <string>

#include "server/server_config.h"
#include "server/server_lifecycle.h"

namespace {

// SIGTERM, SIGINT and SIGHUP must be blocked in every thread, so that only the main thread's
// sigwait takes them. main() is too late for that: shared libraries start threads in their own
// initialisers (OpenBLAS its thread pool), and such a thread, not blocking them, took a
// signal that arrived while the main thread was not in sigwait and died of it, the default
// action (a SIGHUP reload right after another killed the server now and then, and a SIGTERM then
// would skip the drain). The main executable's .preinit_array runs before any library's
// initialiser, so every thread inherits the mask.
void BlockShutdownSignalsBeforeLibraries(int, char**, char**) {
  slotserve::server::BlockShutdownSignals();
}

__attribute__((section(".preinit_array"), used)) void (*const block_shutdown_signals_early)(
    int, char**, char**) = &BlockShutdownSignalsBeforeLibraries;

}  // namespace

int main(int argc, char** argv) {
  absl::StatusOr<slotserve::server::ServerConfig> config =
      slotserve::server::ParseServerCommandLine(argc, argv);
  absl::Status status = config.ok() ? slotserve::server::RunServer(*config) : config.status();
  if (!status.ok()) {
    std::fprintf(stderr, "slotserve-server: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
