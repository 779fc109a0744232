#include "kernels/cuda/cublas_context.cuh"
#include "kernels/cuda/cuda_check.cuh"

namespace slotserve::kernels::cuda {
namespace {

// NVIDIA recommends 32 MiB of cuBLAS workspace on Hopper (4 MiB suffices before it).
constexpr std::size_t kCublasWorkspaceBytes = 32u << 20;

class ThreadCublas {
 public:
  ThreadCublas() {
    SLOTSERVE_CUBLAS_CHECK(cublasCreate(&handle_));
    SLOTSERVE_CUDA_CHECK(cudaMalloc(&workspace_, kCublasWorkspaceBytes));
  }
  // Errors are ignored here: at process exit the CUDA runtime may already be unloaded.
  ~ThreadCublas() {
    (void)cublasDestroy(handle_);
    (void)cudaFree(workspace_);
  }
  ThreadCublas(const ThreadCublas&) = delete;
  ThreadCublas& operator=(const ThreadCublas&) = delete;

  cublasHandle_t Bind(cudaStream_t stream) {
    SLOTSERVE_CUBLAS_CHECK(cublasSetStream(handle_, stream));
    // cublasSetStream resets the workspace to cuBLAS's own pool; put ours back.
    SLOTSERVE_CUBLAS_CHECK(cublasSetWorkspace(handle_, workspace_, kCublasWorkspaceBytes));
    return handle_;
  }

 private:
  cublasHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
};

}  // namespace

cublasHandle_t CublasHandleOn(cudaStream_t stream) {
  thread_local ThreadCublas cublas;
  return cublas.Bind(stream);
}

}  // namespace slotserve::kernels::cuda
