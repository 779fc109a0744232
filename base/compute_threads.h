// How many threads the compute kernels may use. One setting for every caller (the server's
// start-up, the benchmarks, the tools), so none of them reaches into OpenBLAS directly: it sizes
// OpenBLAS and the engine's own worker pool (worker_pool.h) together.
#pragma once

namespace slotserve::base {

// `threads` > 0: use that many; 0 leaves the defaults (OpenBLAS: every core, or
// OPENBLAS_NUM_THREADS; the worker pool: the calling thread alone).
void SetComputeThreads(int threads);

// The number of threads the compute kernels use now.
int ComputeThreads();

}  // namespace slotserve::base
