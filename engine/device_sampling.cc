#include "engine/device_sampling.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace slotserve::engine {

absl::StatusOr<DeviceSampling> ParseDeviceSampling(std::string_view text) {
  if (text == "auto") return DeviceSampling::kAuto;
  if (text == "on") return DeviceSampling::kAlways;
  if (text == "off") return DeviceSampling::kNever;
  return absl::InvalidArgumentError(absl::StrCat(
      "must be auto (on the device for cuda only), on or off, got \"", std::string(text), "\""));
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

bool SamplesOnDevice(DeviceSampling mode, kernels::Backend backend) {
  switch (mode) {
    case DeviceSampling::kAuto:
      return backend == kernels::Backend::kCuda;
    case DeviceSampling::kAlways:
      return true;
    case DeviceSampling::kNever:
      return false;
  }
  return false;
}

}  // namespace slotserve::engine
