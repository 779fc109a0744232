// Precompiled into slotserve_models: config.json and safetensors headers are parsed with
// nlohmann/json, the heaviest header the model floor reads.
#pragma once

#include <filesystem>
#include <fstream>

#include "cmake/precompiled/common.h"
#include "nlohmann/json.hpp"
