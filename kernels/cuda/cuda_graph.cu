#include "kernels/cuda/cuda_graph.h"

#include <cuda_runtime.h>

#include "absl/strings/str_cat.h"
#include "kernels/capture_failure_trap.h"
#include "kernels/cuda/cublas_context.cuh"
#include "kernels/cuda/cuda_check.cuh"

namespace slotserve::kernels::cuda_graph {
namespace {

absl::Status CudaError(const char* what, cudaError_t error) {
  (void)cudaGetLastError();  // clear it so that later launch checks do not report it again
  return absl::InternalError(absl::StrCat(what, " failed: ", cudaGetErrorString(error)));
}

}  // namespace

absl::StatusOr<GraphExec> Capture(Stream stream, absl::FunctionRef<void(Stream)> record) {
  if (stream == nullptr) {
    return absl::InvalidArgumentError(
        "CUDA graph capture needs a stream from DeviceStream::Create, got the legacy default "
        "(null) stream, which cannot be captured");
  }
  const cudaStream_t cuda_stream = cuda::AsCudaStream(stream);
  // Create this thread's cuBLAS handle now: its set-up is not something to capture.
  (void)cuda::CublasHandleOn(cuda_stream);
  // Relaxed: the ops may still allocate their scratch (cudaMalloc) while being captured.
  cudaError_t error = cudaStreamBeginCapture(cuda_stream, cudaStreamCaptureModeRelaxed);
  if (error != cudaSuccess) return CudaError("cudaStreamBeginCapture", error);
  absl::Status recorded;
  {
    // A CUDA call failing inside `record` (one not allowed while capturing) is recorded here
    // instead of aborting the process; the capture still ends below, so the stream is usable.
    CaptureFailureTrap trap;
    record(stream);
    recorded = trap.status();
  }
  cudaGraph_t graph = nullptr;
  error = cudaStreamEndCapture(cuda_stream, &graph);
  if (!recorded.ok()) {
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    (void)cudaGetLastError();
    return absl::InternalError(
        absl::StrCat("capturing the step into a CUDA graph: ", recorded.message()));
  }
  if (error != cudaSuccess) {
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    return CudaError(
        "cudaStreamEndCapture (the recorded work must queue only device work on the captured "
        "stream: no device-to-host copies or synchronisation)",
        error);
  }
  cudaGraphExec_t exec = nullptr;
  error = cudaGraphInstantiate(&exec, graph, 0);
  (void)cudaGraphDestroy(graph);
  if (error != cudaSuccess) return CudaError("cudaGraphInstantiate", error);
  return static_cast<GraphExec>(exec);
}

absl::Status Launch(GraphExec graph, Stream stream) {
  const cudaError_t error =
      cudaGraphLaunch(static_cast<cudaGraphExec_t>(graph), cuda::AsCudaStream(stream));
  if (error != cudaSuccess) return CudaError("cudaGraphLaunch", error);
  return absl::OkStatus();
}

void Destroy(GraphExec graph) {
  if (graph != nullptr) (void)cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(graph));
}

}  // namespace slotserve::kernels::cuda_graph
