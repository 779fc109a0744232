// The --device-sampling setting (auto, on, off), kept so that existing command lines and
// SchedulerOptions still work: it no longer changes anything. It used to choose, per decode
// batch, between selecting tokens on the model's device and on the host from copied logits
// (rows with penalties, logprobs or masks always took the host path). Now every token, decode
// and prompt alike, is selected by the one sampling op (kernels/sampling.h) where the model's
// logits are: on the GPU for cuda, on the host for cpu and reference. Penalties and masks are
// per-row adjustments the op applies, and logprobs copy back just the rows that ask, so no
// request needs a host path any more.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "kernels/backend.h"

namespace slotserve::engine {

enum class DeviceSampling {
  kAuto,    // "auto"
  kAlways,  // "on"
  kNever,   // "off"
};

// "auto", "on" or "off" (the server flag's spelling); INVALID_ARGUMENT naming the choices.
absl::StatusOr<DeviceSampling> ParseDeviceSampling(std::string_view text);
std::string_view DeviceSamplingName(DeviceSampling mode);

// Whether tokens are selected on the model's device: true under every mode and backend (the
// start-up line reports it).
bool SamplesOnDevice(DeviceSampling mode, kernels::Backend backend);

}  // namespace slotserve::engine
