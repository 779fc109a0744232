// Precompiled into slotserve_engine.
#pragma once

#include <deque>
#include <mutex>
#include <random>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cmake/precompiled/common.h"
