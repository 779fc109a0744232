// Precompiled into every library (see slotserve_precompile_headers in the top CMakeLists.txt):
// the standard and Abseil headers that most of our translation units include. Parsing them was
// a large share of each file's compile time; listing a header here changes no file's meaning,
// only how fast it is read.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
