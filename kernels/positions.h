// x[i, :] += pos(positions[i]), fairseq's sinusoidal layout (docs/MODEL_FORMAT.md "The attention
// kinds"):
// half = dim/2, f_j = exp(-j*ln(10000)/(half-1)), pos(p) = [sin(p*f_0..half-1), cos(p*f_0..half-1)].
#pragma once

#include <cstdint>

#include "kernels/backend.h"

namespace slotserve::kernels {

struct AddPositionsParams {
  float* x = nullptr;  // [rows, stride], updated in place
  int64_t stride = 0;
  const int32_t* positions = nullptr;  // [rows], already including position_offset
  int rows = 0;
  int dim = 0;  // even, >= 4
};

template <Backend B>
void LaunchAddPositions(const AddPositionsParams& params, Stream stream);

inline void LaunchAddPositions(Backend backend, const AddPositionsParams& params,
                               Stream stream = nullptr) {
  Dispatch(backend, "add_positions",
           [&](auto tag) { LaunchAddPositions<decltype(tag)::value>(params, stream); });
}

}  // namespace slotserve::kernels
