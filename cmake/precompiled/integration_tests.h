// Precompiled into the integration tests: GoogleTest, the gRPC client side with the API's and
// the health service's generated classes, and nlohmann/json for the HTTP tests.
#pragma once

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "cmake/precompiled/common.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "slotserve/v1/slotserve.grpc.pb.h"
