#include <unordered_map>
#include <vector>

#include "kernels/cuda/cuda_check.cuh"
#include "kernels/cuda/stream_scratch.cuh"

namespace slotserve::kernels::cuda {
namespace {

struct ScratchArea {
  void* current = nullptr;
  std::size_t bytes = 0;
  std::vector<void*> retired;  // smaller areas a captured graph may still use
};

class ThreadScratch {
 public:
  ThreadScratch() = default;
  // Errors are ignored here: at process exit the CUDA runtime may already be unloaded.
  ~ThreadScratch() {
    for (auto& [stream, area] : areas_) {
      (void)cudaFree(area.current);
      for (void* old : area.retired) (void)cudaFree(old);
    }
  }
  ThreadScratch(const ThreadScratch&) = delete;
  ThreadScratch& operator=(const ThreadScratch&) = delete;

  void* Get(cudaStream_t stream, std::size_t bytes) {
    ScratchArea& area = areas_[stream];
    if (area.bytes >= bytes) return area.current;
    std::size_t grown = area.bytes == 0 ? (1u << 20) : area.bytes;
    while (grown < bytes) grown *= 2;
    void* fresh = nullptr;
    SLOTSERVE_CUDA_CHECK(cudaMalloc(&fresh, grown));
    if (area.current != nullptr) area.retired.push_back(area.current);
    area.current = fresh;
    area.bytes = grown;
    return fresh;
  }

 private:
  std::unordered_map<cudaStream_t, ScratchArea> areas_;
};

}  // namespace

void* StreamScratch(cudaStream_t stream, std::size_t bytes) {
  thread_local ThreadScratch scratch;
  return scratch.Get(stream, bytes);
}

}  // namespace slotserve::kernels::cuda
