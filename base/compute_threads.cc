#include "base/compute_threads.h"

#include <cblas.h>

#include "base/worker_pool.h"

namespace slotserve::base {

void SetComputeThreads(int threads) {
  if (threads <= 0) return;
  openblas_set_num_threads(threads);
  WorkerPool::Instance().Resize(threads);
}

int ComputeThreads() { return openblas_get_num_threads(); }

}  // namespace slotserve::base
