#include "server/http/metrics_route.h"

#include <utility>

#include "prometheus/text_serializer.h"

namespace slotserve::server::http {
namespace {

// A scrape is quick, and Prometheus keeps one connection per target: a few threads suffice.
constexpr int kMetricsListenerThreads = 4;

}  // namespace

void AddMetricsRoute(httplib::Server& server, std::shared_ptr<prometheus::Registry> registry) {
  server.Get("/metrics", [registry = std::move(registry)](const httplib::Request&,
                                                          httplib::Response& response) {
    response.set_content(prometheus::TextSerializer().Serialize(registry->Collect()),
                         "text/plain; version=0.0.4; charset=utf-8");
  });
}

absl::StatusOr<std::unique_ptr<HttpListener>> StartMetricsListener(
    const std::string& address, std::shared_ptr<prometheus::Registry> registry) {
  return HttpListener::Start(
      address, ListenerOptions{"--metrics-listen", kMetricsListenerThreads},
      [registry = std::move(registry)](httplib::Server& server) {
        AddMetricsRoute(server, registry);
        server.Get("/", [](const httplib::Request&, httplib::Response& response) {
          response.set_content("slotserve metrics: GET /metrics\n", "text/plain");
        });
      });
}

}  // namespace slotserve::server::http
