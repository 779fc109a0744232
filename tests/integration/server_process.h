// A real slotserve-server process for the integration tests: started on loopback with free
// ports (port 0; the ports are read from its startup line), its stderr captured, stopped with
// SIGTERM (or killed when a test forgets).
#pragma once

#include <sys/types.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>
#include "absl/time/time.h"

namespace slotserve::testing {

class ServerProcess {
 public:
  // Starts the server on the tiny test model with `flags` added (e.g. "--max-slots=2") and
  // waits until it listens. nullptr (with the reason in *error) when it did not come up.
  static std::unique_ptr<ServerProcess> Start(const std::vector<std::string>& flags,
                                              std::string* error);
  ~ServerProcess();

  const std::string& address() const { return address_; }  // "127.0.0.1:PORT"
  int metrics_port() const { return metrics_port_; }
  // The HTTP API's port when started with --http-listen, else 0.
  int http_port() const { return http_port_; }
  // A channel that has not connected yet (for tests of refused connections).
  std::shared_ptr<grpc::Channel> NewChannel() const;
  // A channel whose connection is up: the first connect attempt can fail spuriously in
  // Debian's gRPC 1.51 (connect()'s errno is read after calls that may overwrite it, gRPC pull
  // request 35064; seen as "ipv4:...: No such file or directory" with many client threads), and
  // a call made on a channel in that state fails at once. Waiting for READY lets gRPC's own
  // reconnect with backoff absorb it, as a long-lived client would (waits at most 30 s).
  std::shared_ptr<grpc::Channel> ConnectedChannel() const;

  pid_t pid() const { return pid_; }
  // Sends SIGTERM.
  void Terminate() const;
  // Sends `signal_number` (SIGHUP: reread --api-keys-file).
  void Signal(int signal_number) const;
  // The exit status (or 128 + signal) once the process ended within `timeout`.
  std::optional<int> WaitForExit(absl::Duration timeout);
  // Everything the server wrote to stderr/stdout so far.
  std::string log() const;

 private:
  ServerProcess() = default;
  void ReadOutput(int fd);

  pid_t pid_ = -1;
  std::optional<int> exit_status_;
  std::string address_;
  int metrics_port_ = 0;
  int http_port_ = 0;
  mutable std::mutex log_mu_;
  std::string log_;
  std::thread reader_;
};

// Starts args[0] with `args`, its stdout to /dev/null (stderr stays the test's): its pid, or
// -1 when it could not be started.
pid_t SpawnWithStdoutDiscarded(std::vector<std::string> args);

// The binaries and the model the tests run against (set by CMake).
std::string ServerBinary();
std::string CliBinary();
std::string TinyModelDir();

}  // namespace slotserve::testing
