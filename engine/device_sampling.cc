#include "engine/device_sampling.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace slotserve::engine {

absl::StatusOr<DeviceSampling> ParseDeviceSampling(std::string_view text) {
  if (text == "auto") return DeviceSampling::kAuto;
  if (text == "on") return DeviceSampling::kAlways;
  if (text == "off") return DeviceSampling::kNever;
  return absl::InvalidArgumentError(
      absl::StrCat("must be auto, on or off (accepted for compatibility; it has no effect), got \"",
                   std::string(text), "\""));
}

std::string_view DeviceSamplingName(DeviceSampling mode) {
  switch (mode) {
    case DeviceSampling::kAuto:
      return "auto";
    case DeviceSampling::kAlways:
      return "on";
    case DeviceSampling::kNever:
      return "off";
  }
  return "unknown";
}

bool SamplesOnDevice(DeviceSampling /*mode*/, kernels::Backend /*backend*/) { return true; }

}  // namespace slotserve::engine
