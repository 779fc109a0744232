#include "tests/integration/test_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

extern char** environ;

namespace slotserve::testing {

namespace {

// Reads a Generate stream to its end, counting token messages in *token_messages as they come.
StreamResult ReadStream(grpc::ClientReader<v1::GenerateResponse>& reader,
                        std::atomic<int>* token_messages) {
  StreamResult result;
  v1::GenerateResponse response;
  while (reader.Read(&response)) {
    if (response.has_tokens()) {
      result.ids.insert(result.ids.end(), response.tokens().ids().begin(),
                        response.tokens().ids().end());
      result.text += response.tokens().text();
      if (token_messages != nullptr) ++*token_messages;
    }
    if (response.has_finished()) result.finished = response.finished();
    result.messages.push_back(response);
  }
  result.status = reader.Finish();
  return result;
}

}  // namespace

StreamResult Generate(v1::SlotServe::Stub& stub, const v1::GenerateRequest& request,
                      absl::Duration deadline) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(deadline));
  return ReadStream(*stub.Generate(&context, request), nullptr);
}

v1::GenerateRequest GreedyTextRequest(const std::string& text, uint32_t max_new_tokens) {
  v1::GenerateRequest request;
  request.set_text(text);
  request.mutable_sampling()->set_temperature(0.0f);
  request.mutable_stopping()->set_max_new_tokens(max_new_tokens);
  request.mutable_stopping()->set_ignore_eos(true);
  return request;
}

v1::GenerateRequest SessionTurn(const std::vector<int32_t>& prompt, bool keep,
                                const std::string& handle, uint32_t max_new_tokens) {
  v1::GenerateRequest request;
  for (int32_t id : prompt) request.mutable_token_ids()->add_ids(id);
  request.mutable_sampling()->set_temperature(0.0f);
  request.mutable_stopping()->set_max_new_tokens(max_new_tokens);
  request.mutable_stopping()->set_ignore_eos(true);
  request.mutable_session()->set_keep(keep);
  request.mutable_session()->set_handle(handle);
  return request;
}

v1::ModelInfo GetModelInfo(v1::SlotServe::Stub& stub) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::ModelInfo info;
  grpc::Status status = stub.GetModelInfo(&context, v1::GetModelInfoRequest(), &info);
  if (!status.ok()) info.set_slots_total(-1);  // makes every slot-count check fail visibly
  return info;
}

bool WaitFor(const std::function<bool()>& condition, absl::Duration timeout) {
  const absl::Time give_up = absl::Now() + timeout;
  while (!condition()) {
    if (absl::Now() >= give_up) return false;
    absl::SleepFor(absl::Milliseconds(2));
  }
  return true;
}

std::string HttpGet(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  std::string response;
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
    const std::string request =
        absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
        static_cast<ssize_t>(request.size())) {
      char buffer[8192];
      ssize_t n;
      while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) response.append(buffer, n);
    }
  }
  close(fd);
  const size_t body = response.find("\r\n\r\n");
  if (response.rfind("HTTP/1.1 200", 0) != 0 || body == std::string::npos) return "";
  return response.substr(body + 4);
}

std::optional<double> MetricValue(const std::string& scrape, const std::string& series) {
  for (absl::string_view line : absl::StrSplit(scrape, '\n')) {
    if (line.size() > series.size() && line.substr(0, series.size()) == series &&
        line[series.size()] == ' ') {
      double value;
      if (absl::SimpleAtod(line.substr(series.size() + 1), &value)) return value;
    }
  }
  return std::nullopt;
}

uint32_t TokensLasting(v1::SlotServe::Stub& stub, absl::Duration duration) {
  constexpr uint32_t kProbeTokens = 256;
  const absl::Time start = absl::Now();
  Generate(stub, GreedyTextRequest("In the beginning", kProbeTokens));
  const double seconds_per_token =
      std::max(absl::ToDoubleSeconds(absl::Now() - start), 1e-3) / kProbeTokens;
  return static_cast<uint32_t>(
      std::clamp(absl::ToDoubleSeconds(duration) / seconds_per_token, 256.0, 200000.0));
}

}  // namespace slotserve::testing

namespace slotserve::testing {

BackgroundStream::BackgroundStream(std::shared_ptr<grpc::Channel> channel,
                                   v1::GenerateRequest request)
    : stub_(v1::SlotServe::NewStub(channel)) {
  thread_ = std::thread([this, request = std::move(request)] {
    result_ = ReadStream(*stub_->Generate(&context_, request), &messages_);
    done_ = true;
  });
}

BackgroundStream::~BackgroundStream() {
  if (thread_.joinable()) {
    context_.TryCancel();
    thread_.join();
  }
}

StreamResult BackgroundStream::Wait() {
  if (thread_.joinable()) thread_.join();
  return result_;
}

namespace {

std::string ReadAll(int fd) {
  std::string text;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) text.append(buffer, n);
  close(fd);
  return text;
}

}  // namespace

CommandResult RunCommand(const std::vector<std::string>& args) {
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (std::string& arg : copy) argv.push_back(arg.data());
  argv.push_back(nullptr);
  int out_pipe[2], err_pipe[2];
  CommandResult result;
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) return result;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, out_pipe[0]);
  posix_spawn_file_actions_addclose(&actions, err_pipe[0]);
  pid_t pid;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (spawned != 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    return result;
  }
  // stderr is read on a thread so that neither pipe can fill up and stall the child.
  std::thread err_reader([&] { result.err = ReadAll(err_pipe[0]); });
  result.out = ReadAll(out_pipe[0]);
  err_reader.join();
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

grpc::Status ExportSession(v1::SlotServe::Stub& stub, const std::string& handle,
                           std::string* state) {
  grpc::ClientContext context;
  v1::ExportSessionRequest request;
  request.set_handle(handle);
  v1::ExportSessionResponse response;
  grpc::Status status = stub.ExportSession(&context, request, &response);
  *state = response.state();
  return status;
}

grpc::Status ImportSession(v1::SlotServe::Stub& stub, const std::string& state,
                           std::string* handle) {
  grpc::ClientContext context;
  v1::ImportSessionRequest request;
  request.set_state(state);
  v1::ImportSessionResponse response;
  grpc::Status status = stub.ImportSession(&context, request, &response);
  *handle = response.handle();
  return status;
}

}  // namespace slotserve::testing
