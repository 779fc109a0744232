#include "engine/engine_observer.h"

namespace slotserve::engine {

std::string_view StepPhaseName(StepPhase phase) {
  return phase == StepPhase::kPrefill ? "prefill" : "decode";
}

}  // namespace slotserve::engine
