// Element-wise activation in place: exact-erf GELU 0.5*u*(1+erf(u/sqrt(2))) or ReLU.
#pragma once

#include <cstdint>

#include "kernels/backend.h"

namespace slotserve::kernels {

enum class Activation { kGelu, kRelu };

struct ActivationParams {
  float* x = nullptr;  // [rows, stride], first `cols` of each row updated
  int64_t stride = 0;
  int rows = 0;
  int cols = 0;
  Activation activation = Activation::kGelu;
};

template <Backend B>
void LaunchActivation(const ActivationParams& params, Stream stream);

inline void LaunchActivation(Backend backend, const ActivationParams& params,
                             Stream stream = nullptr) {
  Dispatch(backend, "activation",
           [&](auto tag) { LaunchActivation<decltype(tag)::value>(params, stream); });
}

}  // namespace slotserve::kernels
