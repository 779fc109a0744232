#include "models/int8_activations.h"

#include <atomic>

namespace slotserve::models {
namespace {

std::atomic<bool> int8_activations{false};

}  // namespace

void SetInt8Activations(bool enabled) { int8_activations.store(enabled); }

bool Int8Activations() { return int8_activations.load(std::memory_order_relaxed); }

}  // namespace slotserve::models
