// Precompiled into slotserve_kernels' C++ files (not the CUDA ones).
#pragma once

#include <immintrin.h>

#include "cmake/precompiled/common.h"
