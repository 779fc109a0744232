#include "server/http/http_listener.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace slotserve::server::http {
namespace {

// Connections a client may send requests over before the server closes it (cpp-httplib's
// default is 5, which makes a busy client reconnect every few requests).
constexpr size_t kKeepAliveMaxRequests = 1000;

// cpp-httplib's default socket options set SO_REUSEPORT, with which a second server binds a
// port that is already in use without an error and the kernel splits the connections between
// the two. SO_REUSEADDR alone still allows a restart while old connections sit in TIME_WAIT.
void ListenSocketOptions(socket_t sock) {
  const int yes = 1;
  setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  // Accepted sockets inherit it: each server-sent event goes out at once instead of waiting
  // (Nagle) for the client's delayed ACK of the previous one.
  setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
}

}  // namespace

absl::StatusOr<std::pair<std::string, int>> SplitHostPort(const std::string& address,
                                                          const std::string& flag) {
  const size_t colon = address.rfind(':');
  int port = -1;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(address.substr(colon + 1), &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, " must be host:port (port 0 picks a free one), e.g. 0.0.0.0:8000, got \"", address,
        "\""));
  }
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return std::make_pair(host, port);
}

absl::StatusOr<std::unique_ptr<HttpListener>> HttpListener::Start(
    const std::string& address, const ListenerOptions& options,
    const std::function<void(httplib::Server&)>& add_routes) {
  absl::StatusOr<std::pair<std::string, int>> host_port = SplitHostPort(address, options.flag);
  if (!host_port.ok()) return host_port.status();
  std::unique_ptr<HttpListener> listener(new HttpListener());
  if (options.tls != nullptr) {
    const TlsOptions& paths = options.tls->paths;
    auto tls_server = std::make_unique<Exposed<httplib::SSLServer>>(
        paths.cert_path.c_str(), paths.key_path.c_str(),
        paths.client_ca_path.empty() ? nullptr : paths.client_ca_path.c_str());
    // LoadTlsFiles checked these files already; this fails only when they changed since.
    if (!tls_server->is_valid()) {
      return absl::InvalidArgumentError(absl::StrCat(
          options.flag, ": cannot set up TLS from --tls-cert=", paths.cert_path,
          ", --tls-key=", paths.key_path,
          paths.client_ca_path.empty() ? ""
                                       : absl::StrCat(", --tls-client-ca=", paths.client_ca_path)));
    }
    listener->server_ = std::move(tls_server);
  } else {
    listener->server_ = std::make_unique<Exposed<httplib::Server>>();
  }
  httplib::Server& server = *listener->server_;
  const int threads = options.threads;
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server.set_socket_options(ListenSocketOptions);
  server.set_keep_alive_max_count(kKeepAliveMaxRequests);
  add_routes(server);

  const auto& [host, port] = *host_port;
  if (port == 0) {
    listener->port_ = server.bind_to_any_port(host);
  } else {
    listener->port_ = server.bind_to_port(host, port) ? port : -1;
  }
  if (listener->port_ <= 0) {
    return absl::UnavailableError(absl::StrCat(options.flag, "=", address,
                                               ": cannot listen there (address in use or "
                                               "invalid?)"));
  }
  // cpp-httplib 0.11 listens with a backlog of 5: a burst of new connections (32 clients
  // connecting at once) overflows it and the kernel drops SYNs, which clients resend only
  // after a second. Listening again on the bound socket raises the backlog.
  const socket_t listening_socket =
      options.tls != nullptr ? static_cast<Exposed<httplib::SSLServer>&>(server).listening_socket()
                             : static_cast<Exposed<httplib::Server>&>(server).listening_socket();
  ::listen(listening_socket, SOMAXCONN);
  auto loop_ended = std::make_shared<std::atomic<bool>>(false);
  listener->thread_ = std::thread([&server, loop_ended] {
    server.listen_after_bind();
    *loop_ended = true;
  });
  // stop() only closes the socket once the accept loop runs; wait for it, so that a Stop()
  // right after Start() cannot leave the thread accepting forever.
  while (!server.is_running() && !*loop_ended) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return listener;
}

HttpListener::~HttpListener() { Stop(); }

void HttpListener::Stop() {
  if (server_ == nullptr) return;
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace slotserve::server::http
