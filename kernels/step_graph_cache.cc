#include "kernels/step_graph_cache.h"

#ifdef SLOTSERVE_WITH_CUDA
#include "base/status_macros.h"
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
  auto found = graphs_.find(key);
  if (found == graphs_.end()) {
    SLOTSERVE_ASSIGN_OR_RETURN(cuda_graph::GraphExec graph, cuda_graph::Capture(stream, record));
    found = graphs_.emplace(key, graph).first;
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
}

}  // namespace slotserve::kernels
