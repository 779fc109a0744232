// CUDA graph capture and replay behind plain C++ (no CUDA headers), for
// kernels/step_graph_cache.cc. Only compiled and called when SLOTSERVE_WITH_CUDA is defined.
#pragma once

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/backend.h"

namespace slotserve::kernels::cuda_graph {

// An instantiated graph (cudaGraphExec_t), owned by the caller until Destroy.
using GraphExec = void*;

// Records everything `record` queues on `stream` (which must not be the legacy null stream)
// into a graph and instantiates it. While capturing, the queued work does NOT run. `record`
// may only queue device work: kernels, cuBLAS calls, device-to-device copies and fills; a
// synchronising call (device-to-host copy, stream sync) invalidates the capture and is
// reported as an error.
absl::StatusOr<GraphExec> Capture(Stream stream, absl::FunctionRef<void(Stream)> record);
// Queues one replay of the graph on `stream`.
absl::Status Launch(GraphExec graph, Stream stream);
void Destroy(GraphExec graph);

}  // namespace slotserve::kernels::cuda_graph
