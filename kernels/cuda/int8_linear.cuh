// The CUDA linear op over int8 weights with per-output-row scales (int8_linear_cuda.cu);
// linear_cuda.cu dispatches I8 here.
#pragma once

#include <cuda_runtime.h>

#include "kernels/linear.h"

namespace slotserve::kernels::cuda {

void LinearInt8(const LinearParams& p, cudaStream_t stream);

}  // namespace slotserve::kernels::cuda
