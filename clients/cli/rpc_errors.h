// Human-readable failures of slotserve-cli's RPCs.
#pragma once

#include <string>

#include <grpcpp/support/status.h>

namespace slotserve::clients {

// One line that says whether the server could not be reached or refused, and why:
// "cannot reach the server at localhost:50051 (is slotserve-server running?): ...". An
// UNAVAILABLE the server itself answered because its session store could not be reached (its
// message starts "session store", as every such error of the server's does) says that
// instead: the server is up, its store is not.
std::string DescribeRpcFailure(const grpc::Status& status, const std::string& server);

}  // namespace slotserve::clients
