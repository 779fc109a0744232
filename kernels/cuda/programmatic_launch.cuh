// Programmatic dependent launch (compute capability 9.0+): a kernel launched with
// LaunchOverlappingPreceding may be scheduled while the kernel before it in the stream is still
// running, and does what does not depend on that kernel (issuing its weight loads) before it
// waits. At batch 1 a decode step is ~130 short kernels, each paying a launch and a first DRAM
// round trip; this hides those behind the kernel before.
//
// The contract, on the device side:
//   - a kernel launched with LaunchOverlappingPreceding calls WaitForPrecedingKernel() before
//     it reads anything an earlier kernel wrote, and before it writes anything at all (its
//     outputs may still be read by the kernel before it); before the wait it may only read
//     what no kernel writes (weights);
//   - a kernel that calls AllowDependentLaunch() lets the next kernel, if launched this way, be
//     scheduled once all of its blocks have called it (or exited). It changes nothing else: the
//     next kernel's wait still returns only after this kernel has finished and its writes are
//     visible. Without the call the next kernel is scheduled as this one's blocks exit.
// Each grid's blocks have all started before its dependent is scheduled, so a dependent
// spinning in its wait never holds the SM slots its prerequisite still needs.
//
// On older GPUs, and with SLOTSERVE_CUDA_PDL=0 in the environment (to compare, or to rule it
// out), launches are plain stream-ordered launches and both device calls do nothing. Stream
// capture keeps the overlap as programmatic edges of the step's graph.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "kernels/cuda/cuda_check.cuh"

namespace slotserve::kernels::cuda {

__device__ __forceinline__ void WaitForPrecedingKernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void AllowDependentLaunch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

// True when the current GPU supports the overlap and SLOTSERVE_CUDA_PDL is not "0" (asked
// once per process, like ResidentThreads: the engine drives one GPU).
bool ProgrammaticLaunchEnabled();

// kernel<<<grid, block, shared_bytes, stream>>>(args...), allowed to overlap the kernel before
// it in `stream` when ProgrammaticLaunchEnabled(). Checks the launch.
template <typename... KernelArgs, typename... Args>
void LaunchOverlappingPreceding(void (*kernel)(KernelArgs...), dim3 grid, dim3 block,
                                std::size_t shared_bytes, cudaStream_t stream, Args&&... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  cudaLaunchAttribute attribute = {};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  if (ProgrammaticLaunchEnabled()) {
    config.attrs = &attribute;
    config.numAttrs = 1;
  }
  SLOTSERVE_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
}

}  // namespace slotserve::kernels::cuda
