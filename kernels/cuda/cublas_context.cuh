// This thread's cuBLAS handle, bound to a stream. One handle per thread because a handle is
// not safe to share between threads; the engine thread is the only heavy user.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace slotserve::kernels::cuda {

// Creates the handle (and its workspace) on first use in this thread, then binds it to
// `stream`. The workspace is set explicitly so that cuBLAS never allocates on its own, which
// would break CUDA graph capture.
cublasHandle_t CublasHandleOn(cudaStream_t stream);

}  // namespace slotserve::kernels::cuda
