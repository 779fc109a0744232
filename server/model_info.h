// The GetModelInfo answer: the model's shape and the live state-slot pool.
#pragma once

#include <string>

#include "engine/scheduler.h"
#include "slotserve/v1/slotserve.pb.h"

namespace slotserve::server {

// Fills every field of v1::ModelInfo; `model_name` is the model directory's name.
v1::ModelInfo DescribeModel(const engine::Scheduler& scheduler, const std::string& model_name);

}  // namespace slotserve::server
