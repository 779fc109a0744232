#include "engine/engine_observer.h"

namespace slotserve::engine {

std::string_view StepPhaseName(StepPhase phase) {
  switch (phase) {
    case StepPhase::kPrefill:
      return "prefill";
    case StepPhase::kDecode:
      return "decode";
    case StepPhase::kEncode:
      return "encode";
  }
  return "unknown";
}

}  // namespace slotserve::engine
