#include "kernels/step_graph_cache.h"

#include <cstdio>
#include <string>

#ifdef SLOTSERVE_WITH_CUDA
#include "kernels/cuda/cuda_graph.h"
#endif

namespace slotserve::kernels {

StepGraphCache::~StepGraphCache() { Invalidate(); }

absl::Status StepGraphCache::Run(int64_t key, Stream stream,
                                 absl::FunctionRef<void(Stream)> record) {
  if (backend_ != Backend::kCuda) {
    record(stream);
    return absl::OkStatus();
  }
#ifdef SLOTSERVE_WITH_CUDA
  if (!capture_failure_.ok()) {
    record(stream);
    return absl::OkStatus();
  }
  auto found = graphs_.find(key);
  if (found == graphs_.end()) {
    absl::StatusOr<cuda_graph::GraphExec> graph = cuda_graph::Capture(stream, record);
    if (graph.status().code() == absl::StatusCode::kInvalidArgument) return graph.status();
    if (!graph.ok()) {
      // The captured work did not run: run it now, directly, and keep doing so.
      capture_failure_ = graph.status();
      std::fprintf(stderr,
                   "slotserve: WARNING: CUDA graph capture failed, decode steps run without "
                   "graphs from now on: %s\n",
                   std::string(capture_failure_.message()).c_str());
      record(stream);
      return absl::OkStatus();
    }
    found = graphs_.emplace(key, *graph).first;
  }
  return cuda_graph::Launch(found->second, stream);
#else
  (void)key;
  FailNoCudaBackend("step_graph_cache");
#endif
}

void StepGraphCache::Invalidate() {
#ifdef SLOTSERVE_WITH_CUDA
  for (auto& entry : graphs_) cuda_graph::Destroy(entry.second);
#endif
  graphs_.clear();
  capture_failure_ = absl::OkStatus();
}

}  // namespace slotserve::kernels
