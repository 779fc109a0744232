// Precompiled into slotserve_service: gRPC and the API's generated protobuf classes, with
// cpp-httplib and nlohmann/json for the start-up code that wires the HTTP front end.
#pragma once

#include <grpcpp/grpcpp.h>
#include <httplib.h>

#include "absl/strings/str_format.h"
#include "cmake/precompiled/engine.h"
#include "nlohmann/json.hpp"
#include "slotserve/v1/slotserve.grpc.pb.h"  // generated first: slotserve_proto is a dependency
