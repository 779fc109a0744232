// y = (x - mean) / sqrt(var + eps) * gamma + beta, biased variance, row by row.
#pragma once

#include <cstdint>

#include "kernels/backend.h"

namespace slotserve::kernels {

struct LayerNormParams {
  const float* x = nullptr;  // [rows, x_stride]
  int64_t x_stride = 0;
  const float* gamma = nullptr;  // [dim]
  const float* beta = nullptr;   // [dim]
  float* y = nullptr;            // [rows, y_stride]; may alias x
  int64_t y_stride = 0;
  int rows = 0;
  int dim = 0;
  float eps = 1e-5f;
};

template <Backend B>
void LaunchLayerNorm(const LayerNormParams& params, Stream stream);

inline void LaunchLayerNorm(Backend backend, const LayerNormParams& params,
                            Stream stream = nullptr) {
  Dispatch(backend, "layer_norm",
           [&](auto tag) { LaunchLayerNorm<decltype(tag)::value>(params, stream); });
}

}  // namespace slotserve::kernels
