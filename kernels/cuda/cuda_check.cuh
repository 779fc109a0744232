// Error checks for CUDA runtime and cuBLAS calls inside the cuda backend. The Launch* entry
// points return void (a kernel launch cannot fail for a reason the caller could handle), so a
// failing call aborts with the call, the error name and where it happened; except while a
// graph is captured on this thread (kernels/capture_failure_trap.h), when the failure is
// recorded for the capture to return and the call site carries on.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "kernels/backend.h"

namespace slotserve::kernels::cuda {

// Aborts unless a CaptureFailureTrap is installed on this thread (then it records and returns).
void FailCuda(const char* call, const char* error, const char* file, int line);

inline cudaStream_t AsCudaStream(Stream stream) { return static_cast<cudaStream_t>(stream); }

inline const char* CublasStatusName(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS:
      return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR:
      return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR:
      return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
    default:
      return "cublas error";
  }
}

}  // namespace slotserve::kernels::cuda

#define SLOTSERVE_CUDA_CHECK(call)                                                          \
  do {                                                                                      \
    const cudaError_t slotserve_cuda_error = (call);                                        \
    if (slotserve_cuda_error != cudaSuccess) {                                              \
      ::slotserve::kernels::cuda::FailCuda(#call, cudaGetErrorString(slotserve_cuda_error), \
                                           __FILE__, __LINE__);                             \
    }                                                                                       \
  } while (0)

#define SLOTSERVE_CUBLAS_CHECK(call)                                                              \
  do {                                                                                            \
    const cublasStatus_t slotserve_cublas_status = (call);                                        \
    if (slotserve_cublas_status != CUBLAS_STATUS_SUCCESS) {                                       \
      ::slotserve::kernels::cuda::FailCuda(                                                       \
          #call, ::slotserve::kernels::cuda::CublasStatusName(slotserve_cublas_status), __FILE__, \
          __LINE__);                                                                              \
    }                                                                                             \
  } while (0)

// After a <<<...>>> launch: reports a bad configuration (too many threads, too much shared
// memory) at the launch site instead of at the next unrelated call.
#define SLOTSERVE_CUDA_CHECK_LAUNCH() SLOTSERVE_CUDA_CHECK(cudaGetLastError())
