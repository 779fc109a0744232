// RMS norm as the fla models use it (docs/FLA_CHECKPOINTS.md §3): per group of a row,
// u = silu_input ? silu(x) : x, y = u / sqrt(mean(u²) + eps) ⊙ weight ⊙ silu(gate).
// One op covers fla's RMSNorm (groups = 1), FusedRMSNormGated (per head: groups = heads,
// gate set) and GSA's output norm rms_norm(silu(o)) (silu_input).
#pragma once

#include <cstdint>

#include "kernels/backend.h"

namespace slotserve::kernels {

struct RmsNormParams {
  const float* x = nullptr;  // [rows, x_stride]
  int64_t x_stride = 0;
  float* y = nullptr;  // [rows, y_stride]; may alias x
  int64_t y_stride = 0;
  int rows = 0;
  // Each row holds groups * group_dim values; each group is normalised on its own.
  int groups = 1;
  int group_dim = 0;
  const float* weight = nullptr;  // [group_dim], shared by every group; null = no affine
  float eps = 1e-6f;
  bool silu_input = false;  // x := silu(x) = x * sigmoid(x) first (GSA's output norm)
  // Non-null: y *= silu(gate[r, c]) after the norm (fla's FusedRMSNormGated). Never aliases y.
  const float* gate = nullptr;
  int64_t gate_stride = 0;
};

template <Backend B>
void LaunchRmsNorm(const RmsNormParams& params, Stream stream);

inline void LaunchRmsNorm(Backend backend, const RmsNormParams& params, Stream stream = nullptr) {
  Dispatch(backend, "rms_norm",
           [&](auto tag) { LaunchRmsNorm<decltype(tag)::value>(params, stream); });
}

}  // namespace slotserve::kernels
