// Precompiled into slotserve_service: gRPC, cpp-httplib and nlohmann/json are most of what a
// front-end file parses (an HTTP route file preprocesses to ~245k lines), and the API's
// generated protobuf classes.
#pragma once

#include <grpcpp/grpcpp.h>
#include <httplib.h>

#include "absl/strings/str_format.h"
#include "cmake/precompiled/engine.h"
#include "nlohmann/json.hpp"
#include "slotserve/v1/slotserve.grpc.pb.h"  // generated first: slotserve_proto is a dependency
