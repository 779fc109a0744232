#include "base/compute_threads.h"

#include <cblas.h>
#include <sched.h>

#include <algorithm>
#include <thread>

#include "base/worker_pool.h"

namespace slotserve::base {

namespace {

// The cores this process may run on (its affinity mask: a container's cpuset or `taskset`),
// not every core of the host.
int UsableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace

void SetComputeThreads(int threads) {
  const int count = threads > 0 ? threads : UsableCores();
  // One pool does the splitting; OpenBLAS runs single-threaded inside a part, so its own
  // threads never compete with the pool's for the same cores.
  openblas_set_num_threads(1);
  WorkerPool::Instance().Resize(count);
}

int ComputeThreads() { return WorkerPool::Instance().threads(); }

void SetOpenBlasThreads(int threads) { openblas_set_num_threads(std::max(1, threads)); }

}  // namespace slotserve::base
