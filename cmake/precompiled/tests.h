// Precompiled into the unit and golden test binaries: GoogleTest besides the common headers.
#pragma once

#include <gtest/gtest.h>

#include "cmake/precompiled/common.h"
