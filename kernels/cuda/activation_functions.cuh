// The activations as device functions, shared by the activation kernel and the GEMV that
// applies one to its outputs, so both give the same bits.
#pragma once

#include "kernels/activation.h"

namespace slotserve::kernels::cuda {

template <Activation kActivation>
__device__ __forceinline__ float Activate(float u) {
  if constexpr (kActivation == Activation::kGelu) {
    return 0.5f * u * (1.0f + erff(u * 0.70710678118654752f));
  } else {
    return u > 0.0f ? u : 0.0f;
  }
}

}  // namespace slotserve::kernels::cuda
