#include "base/compute_threads.h"

#include <cblas.h>

namespace slotserve::base {

void SetComputeThreads(int threads) {
  if (threads > 0) openblas_set_num_threads(threads);
}

int ComputeThreads() { return openblas_get_num_threads(); }

}  // namespace slotserve::base
