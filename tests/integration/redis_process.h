// A real redis-server for the tests of the shared session store: started on loopback on a free
// port with persistence off (--save '' --appendonly no), killed when the object goes.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

namespace slotserve::testing {

class RedisProcess {
 public:
  // The redis-server on PATH, or "" when there is none (the tests then skip, saying so).
  static std::string FindBinary();
  // Starts it and waits until it accepts connections; nullptr (with the reason in *error)
  // when it did not come up.
  static std::unique_ptr<RedisProcess> Start(std::string* error);
  ~RedisProcess();

  int port() const { return port_; }
  std::string url() const;  // "redis://127.0.0.1:PORT"
  // SIGKILL and wait: Redis is gone, as when its machine dies.
  void Kill();
  // Sends `signal` (SIGSTOP: Redis hangs, as in a partition; SIGCONT: it goes on).
  void Signal(int signal);

 private:
  RedisProcess() = default;
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace slotserve::testing
