// Precompiled into slotserve_http: cpp-httplib and nlohmann/json are most of what an HTTP route
// file parses (one preprocesses to ~245k lines). No gRPC and no protobuf: the HTTP front end
// compiles without them (server/CMakeLists.txt).
#pragma once

#include <httplib.h>

#include "absl/strings/str_format.h"
#include "cmake/precompiled/engine.h"
#include "nlohmann/json.hpp"
