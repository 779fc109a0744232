#include "base/compute_threads.h"

#include <cblas.h>

#include <algorithm>
#include <thread>

#include "base/worker_pool.h"

namespace slotserve::base {

void SetComputeThreads(int threads) {
  const int count =
      threads > 0 ? threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  // One pool does the splitting; OpenBLAS runs single-threaded inside a part, so its own
  // threads never compete with the pool's for the same cores.
  openblas_set_num_threads(1);
  WorkerPool::Instance().Resize(count);
}

int ComputeThreads() { return WorkerPool::Instance().threads(); }

void SetOpenBlasThreads(int threads) { openblas_set_num_threads(std::max(1, threads)); }

}  // namespace slotserve::base
