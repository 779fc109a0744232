// How many threads the compute kernels may use. One setting for every caller (the server's
// start-up, the benchmarks, the tools), so none of them reaches into OpenBLAS directly and a
// future thread pool of our own kernels is set in the same place.
#pragma once

namespace slotserve::base {

// `threads` > 0: use that many; 0 leaves the library's default (OpenBLAS: every core, or
// OPENBLAS_NUM_THREADS).
void SetComputeThreads(int threads);

// The number of threads the compute kernels use now.
int ComputeThreads();

}  // namespace slotserve::base
