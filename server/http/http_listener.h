// One cpp-httplib server on an address of its own: binds "host:port" (port 0 picks a free
// port), serves connections on a fixed pool of threads, and stops when destroyed. Both the
// HTTP API (--http-listen) and the Prometheus endpoint (--metrics-listen) are one of these.
//
// cpp-httplib serves a connection on one thread from accept to close (blocking I/O), so the
// pool size is how many connections are served at once; further connections wait, accepted,
// until a thread is free. A streaming response holds its thread until it ends.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <httplib.h>
#include "absl/status/statusor.h"
#include "server/tls_files.h"

namespace slotserve::server::http {

struct ListenerOptions {
  std::string flag;  // the flag that gave the address ("--http-listen"), named in errors
  int threads = 4;   // connections served at once
  // HTTPS with these (already checked) files when set; plain HTTP otherwise. Client
  // certificates are required when they include a client CA.
  const TlsFiles* tls = nullptr;
};

class HttpListener {
 public:
  // `add_routes` registers the handlers before the first connection is accepted.
  static absl::StatusOr<std::unique_ptr<HttpListener>> Start(
      const std::string& address, const ListenerOptions& options,
      const std::function<void(httplib::Server&)>& add_routes);

  // Stop()s.
  ~HttpListener();
  HttpListener(const HttpListener&) = delete;
  HttpListener& operator=(const HttpListener&) = delete;

  // Closes the listening socket and joins every connection thread. A connection idle in
  // keep-alive is closed within the keep-alive timeout (5 s), so this may take that long.
  // Idempotent.
  void Stop();

  int port() const { return port_; }

 private:
  HttpListener() = default;

  // Exposes the listening socket of an httplib::Server or SSLServer, whose backlog Start()
  // raises.
  template <typename Base>
  class Exposed : public Base {
   public:
    using Base::Base;
    socket_t listening_socket() const { return this->svr_sock_; }
  };

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

// "host:port" split into the host (brackets of "[::1]" removed) and the port, or
// INVALID_ARGUMENT naming `flag`.
absl::StatusOr<std::pair<std::string, int>> SplitHostPort(const std::string& address,
                                                          const std::string& flag);

}  // namespace slotserve::server::http
