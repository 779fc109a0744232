#include "tests/integration/redis_process.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "tests/integration/server_process.h"

namespace slotserve::testing {
namespace {

// A port nothing listens on now (the kernel's pick for port 0); Redis binds it right after.
int FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  close(fd);
  return port;
}

bool Accepts(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  const bool connected = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  close(fd);
  return connected;
}

}  // namespace

std::string RedisProcess::FindBinary() {
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path != nullptr ? path : "", ':')) {
    const std::string candidate = absl::StrCat(dir, "/redis-server");
    if (!dir.empty() && access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::unique_ptr<RedisProcess> RedisProcess::Start(std::string* error) {
  std::unique_ptr<RedisProcess> redis(new RedisProcess());
  redis->port_ = FreeLoopbackPort();
  std::vector<std::string> args = {FindBinary(), "--port",       absl::StrCat(redis->port_),
                                   "--bind",     "127.0.0.1",    "--save",
                                   "",           "--appendonly", "no"};
  redis->pid_ = SpawnWithStdoutDiscarded(args);
  if (redis->pid_ <= 0) {
    *error = absl::StrCat("cannot start ", args[0]);
    return nullptr;
  }
  const absl::Time give_up = absl::Now() + absl::Seconds(20);
  while (absl::Now() < give_up) {
    if (Accepts(redis->port_)) return redis;
    absl::SleepFor(absl::Milliseconds(20));
  }
  *error = absl::StrCat(args[0], " did not accept connections on port ", redis->port_);
  return nullptr;
}

std::string RedisProcess::url() const { return absl::StrCat("redis://127.0.0.1:", port_); }

void RedisProcess::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void RedisProcess::Signal(int signal) {
  if (pid_ > 0) kill(pid_, signal);
}

RedisProcess::~RedisProcess() { Kill(); }

}  // namespace slotserve::testing
