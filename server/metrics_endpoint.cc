#include "server/metrics_endpoint.h"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "prometheus/text_serializer.h"

namespace slotserve::server {
namespace {

constexpr size_t kMaxRequestBytes = 8192;

absl::Status SocketError(const std::string& address, const char* what) {
  return absl::UnavailableError(
      absl::StrCat("--metrics-listen=", address, ": ", what, ": ", std::strerror(errno)));
}

void SendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;  // the scraper went away; nothing to do
    sent += static_cast<size_t>(n);
  }
}

std::string Response(const char* status, const char* content_type, const std::string& body,
                     bool head_only) {
  return absl::StrCat("HTTP/1.1 ", status, "\r\nContent-Type: ", content_type,
                      "\r\nContent-Length: ", body.size(), "\r\nConnection: close\r\n\r\n",
                      head_only ? "" : body);
}

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(
    const std::string& address, std::shared_ptr<prometheus::Registry> registry) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("--metrics-listen must be host:port, got \"", address, "\""));
  }
  std::string host = address.substr(0, colon);
  const std::string port = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (int error = getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &found);
      error != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--metrics-listen=", address, ": cannot resolve: ", gai_strerror(error)));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> addresses(found, freeaddrinfo);
  const int fd = socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return SocketError(address, "socket");
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd, found->ai_addr, found->ai_addrlen) != 0 || listen(fd, 64) != 0) {
    absl::Status error = SocketError(address, "cannot listen there");
    close(fd);
    return error;
  }
  sockaddr_storage bound{};
  socklen_t bound_size = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &bound_size);
  const int bound_port =
      ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                        : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  std::unique_ptr<MetricsEndpoint> endpoint(
      new MetricsEndpoint(fd, bound_port, std::move(registry)));
  endpoint->thread_ = std::thread([raw = endpoint.get()] { raw->Serve(); });
  return endpoint;
}

MetricsEndpoint::MetricsEndpoint(int listen_fd, int port,
                                 std::shared_ptr<prometheus::Registry> registry)
    : listen_fd_(listen_fd), port_(port), registry_(std::move(registry)) {}

MetricsEndpoint::~MetricsEndpoint() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  close(listen_fd_);
}

void MetricsEndpoint::Serve() {
  while (!stopping_) {
    pollfd waiting{listen_fd_, POLLIN, 0};
    // Wakes up now and then to notice stopping_.
    if (poll(&waiting, 1, 200) <= 0) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    HandleConnection(fd);
    close(fd);
  }
}

void MetricsEndpoint::HandleConnection(int fd) const {
  // A stalled client must not hold up the next scrape for long.
  timeval timeout{2, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  std::string request;
  char buffer[2048];
  while (!absl::StrContains(request, "\r\n\r\n") && !absl::StrContains(request, "\n\n") &&
         request.size() < kMaxRequestBytes) {
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    request.append(buffer, static_cast<size_t>(n));
  }
  const std::string request_line = request.substr(0, request.find_first_of("\r\n"));
  const std::vector<std::string> parts = absl::StrSplit(request_line, ' ');
  if (parts.size() < 2) {
    SendAll(fd, Response("400 Bad Request", "text/plain", "bad request\n", false));
    return;
  }
  const bool head_only = parts[0] == "HEAD";
  if (parts[0] != "GET" && !head_only) {
    SendAll(fd, Response("405 Method Not Allowed", "text/plain", "use GET\n", false));
    return;
  }
  const std::string path = parts[1].substr(0, parts[1].find('?'));
  if (path == "/metrics") {
    const std::string body = prometheus::TextSerializer().Serialize(registry_->Collect());
    SendAll(fd, Response("200 OK", "text/plain; version=0.0.4; charset=utf-8", body, head_only));
  } else if (path == "/") {
    SendAll(fd, Response("200 OK", "text/plain", "slotserve metrics: GET /metrics\n", head_only));
  } else {
    SendAll(fd, Response("404 Not Found", "text/plain", "not found; try /metrics\n", head_only));
  }
}

}  // namespace slotserve::server
