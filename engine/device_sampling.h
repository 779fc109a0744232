// Where a decode step's tokens are sampled: on the model's device (LanguageModel::StepAndSample:
// only token ids cross to the host) or on the host from copied logits (the only way for rows
// with penalties, logprobs or masked ids, which always stay there).
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "kernels/backend.h"

namespace slotserve::engine {

enum class DeviceSampling {
  // On the device on cuda only: copying a [B, vocab] logits block back costs a cuda step more
  // than sampling does, while on cpu the host sampler (nth_element, no full sort) is faster
  // than the op's sort per row.
  kAuto,
  kAlways,  // on the device whatever the backend (tests exercise the path on cpu this way)
  kNever,   // always on the host
};

// "auto", "on" or "off" (the server flag's spelling); INVALID_ARGUMENT naming the choices.
absl::StatusOr<DeviceSampling> ParseDeviceSampling(std::string_view text);
std::string_view DeviceSamplingName(DeviceSampling mode);

// Whether decode steps on `backend` try the device under `mode`.
bool SamplesOnDevice(DeviceSampling mode, kernels::Backend backend);

}  // namespace slotserve::engine
