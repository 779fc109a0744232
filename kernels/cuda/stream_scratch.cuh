// Temporary device memory for ops that need it between their own kernels (the linear op's
// split activations and partial products). One scratch area per (thread, stream): work on
// one stream runs in order, so an op may reuse the area as soon as the previous op's kernels
// are queued. Its contents never outlive one op.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace slotserve::kernels::cuda {

// At least `bytes` of scratch for `stream`, 256-byte aligned. Growing allocates a larger area
// but keeps the old ones alive until the thread exits, because a captured CUDA graph may still
// refer to them; growth doubles, so few areas are ever kept.
void* StreamScratch(cudaStream_t stream, std::size_t bytes);

}  // namespace slotserve::kernels::cuda
