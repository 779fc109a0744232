// Precompiled into the CLI's library.
#pragma once

#include <grpcpp/grpcpp.h>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "cmake/precompiled/common.h"
#include "slotserve/v1/slotserve.grpc.pb.h"  // generated first: slotserve_proto is a dependency
