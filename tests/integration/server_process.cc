#include "tests/integration/server_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

extern char** environ;

namespace slotserve::testing {

std::string ServerBinary() { return SLOTSERVE_SERVER_BINARY; }
std::string CliBinary() { return SLOTSERVE_CLI_BINARY; }
std::string TinyModelDir() { return SLOTSERVE_TINY_MODEL_DIR; }

pid_t SpawnWithStdoutDiscarded(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return spawned == 0 ? pid : -1;
}

std::unique_ptr<ServerProcess> ServerProcess::Start(const std::vector<std::string>& flags,
                                                    std::string* error) {
  std::vector<std::string> args = {ServerBinary(), "--model=" + TinyModelDir(),
                                   "--listen=127.0.0.1:0", "--metrics-listen=127.0.0.1:0",
                                   "--threads=1"};
  args.insert(args.end(), flags.begin(), flags.end());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    *error = "pipe failed";
    return nullptr;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  std::unique_ptr<ServerProcess> server(new ServerProcess());
  const int spawned = posix_spawn(&server->pid_, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (spawned != 0) {
    close(pipe_fds[0]);
    *error = absl::StrCat("cannot start ", args[0]);
    return nullptr;
  }
  server->reader_ = std::thread([raw = server.get(), fd = pipe_fds[0]] { raw->ReadOutput(fd); });

  // "listening on 127.0.0.1:PORT, metrics on http://127.0.0.1:PORT/metrics"
  const std::regex startup(R"(listening on ([0-9.]+:[0-9]+), metrics on http://[0-9.]+:([0-9]+))");
  // Printed before the main line, so it is there once that is.
  const std::regex http_api(R"(HTTP API on https?://[0-9.]+:([0-9]+))");
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  while (absl::Now() < give_up) {
    std::smatch match;
    const std::string text = server->log();
    if (std::regex_search(text, match, startup)) {
      server->address_ = match[1];
      server->metrics_port_ = std::stoi(match[2]);
      if (std::regex_search(text, match, http_api)) server->http_port_ = std::stoi(match[1]);
      return server;
    }
    if (server->WaitForExit(absl::Milliseconds(20)).has_value()) break;
  }
  *error = absl::StrCat("the server did not start; its output:\n", server->log());
  return nullptr;
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0 && !exit_status_.has_value()) {
    kill(pid_, SIGKILL);
    WaitForExit(absl::Seconds(10));
  }
  if (reader_.joinable()) reader_.join();
}

std::shared_ptr<grpc::Channel> ServerProcess::NewChannel() const {
  grpc::ChannelArguments arguments;
  // Every test's channel gets its own connection, as separate clients would.
  arguments.SetInt("grpc.use_local_subchannel_pool", 1);
  return grpc::CreateCustomChannel(address_, grpc::InsecureChannelCredentials(), arguments);
}

std::shared_ptr<grpc::Channel> ServerProcess::ConnectedChannel() const {
  std::shared_ptr<grpc::Channel> channel = NewChannel();
  // Not READY after 30 s: the test's first call on it fails and says why.
  channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(30));
  return channel;
}

void ServerProcess::Terminate() const { kill(pid_, SIGTERM); }

void ServerProcess::Signal(int signal_number) const { kill(pid_, signal_number); }

std::optional<int> ServerProcess::WaitForExit(absl::Duration timeout) {
  const absl::Time give_up = absl::Now() + timeout;
  while (!exit_status_.has_value()) {
    int status = 0;
    const pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
      exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      // The server closed its end of the pipe when it exited: once the reader has read to the
      // end, log() holds everything it wrote. Without this a test could read the log before its
      // last lines (the reason it stopped, "drained") had arrived, on a busy machine.
      if (reader_.joinable()) reader_.join();
      break;
    }
    if (absl::Now() >= give_up) break;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return exit_status_;
}

std::string ServerProcess::log() const {
  std::lock_guard<std::mutex> lock(log_mu_);
  return log_;
}

void ServerProcess::ReadOutput(int fd) {
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) {
    std::lock_guard<std::mutex> lock(log_mu_);
    log_.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
}

}  // namespace slotserve::testing
