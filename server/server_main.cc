// slotserve-server: see server_lifecycle.h. Exit status 0 after a clean SIGTERM/SIGINT
// drain, 1 with a one-line error when a flag or the model directory is wrong.
#include <cstdio>
#include <string>

#include "server/server_config.h"
#include "server/server_lifecycle.h"

int main(int argc, char** argv) {
  // Before any thread exists, so every thread inherits the mask and only sigwait sees them.
  slotserve::server::BlockShutdownSignals();
  absl::StatusOr<slotserve::server::ServerConfig> config =
      slotserve::server::ParseServerCommandLine(argc, argv);
  absl::Status status = config.ok() ? slotserve::server::RunServer(*config) : config.status();
  if (!status.ok()) {
    std::fprintf(stderr, "slotserve-server: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
