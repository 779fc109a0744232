// The Prometheus scrape endpoint: a minimal HTTP/1.1 server on its own port that answers
// GET /metrics with the registry in Prometheus text format (prometheus-cpp's TextSerializer).
//
// Why not prometheus::Exposer: its civetweb worker threads run on fixed 100 KiB stacks, glibc
// carves static TLS out of them (OpenBLAS alone has 60 KiB), and libquadmath (loaded with
// OpenBLAS) registers printf extensions that make every printf take glibc's stack-hungry
// positional path; the first scrape overflowed the stack and crashed the server.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "prometheus/registry.h"

namespace slotserve::server {

class MetricsEndpoint {
 public:
  // Binds `address` ("host:port"; port 0 picks a free port) and starts serving on one thread.
  static absl::StatusOr<std::unique_ptr<MetricsEndpoint>> Start(
      const std::string& address, std::shared_ptr<prometheus::Registry> registry);

  // Stops accepting and joins the thread.
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  int port() const { return port_; }

 private:
  MetricsEndpoint(int listen_fd, int port, std::shared_ptr<prometheus::Registry> registry);
  void Serve();
  void HandleConnection(int fd) const;

  const int listen_fd_;
  const int port_;
  const std::shared_ptr<prometheus::Registry> registry_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace slotserve::server
