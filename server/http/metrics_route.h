// The Prometheus scrape endpoint, GET /metrics: the registry in Prometheus text format
// (prometheus-cpp's TextSerializer). It is served on its own listener (--metrics-listen, where
// Prometheus, the dashboards and the autoscaler scrape it) and beside the API on --http-listen
// (the README's "The HTTP API").
#pragma once

#include <memory>
#include <string>

#include <httplib.h>
#include "absl/status/statusor.h"
#include "prometheus/registry.h"
#include "server/http/http_listener.h"

namespace slotserve::server::http {

// Adds GET /metrics.
void AddMetricsRoute(httplib::Server& server, std::shared_ptr<prometheus::Registry> registry);

// The --metrics-listen listener: GET /metrics, and GET / naming it.
absl::StatusOr<std::unique_ptr<HttpListener>> StartMetricsListener(
    const std::string& address, std::shared_ptr<prometheus::Registry> registry);

}  // namespace slotserve::server::http
