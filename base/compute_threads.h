// How many threads the compute kernels may use. One setting for every caller (the server's
// start-up, the benchmarks, the tools), so none of them reaches into OpenBLAS directly: the
// engine's own worker pool (worker_pool.h) gets the threads and splits each op's work (linear
// layers by output features, attention by rows and heads); OpenBLAS is set to one thread and
// runs inside a part, so the two never compete for the cores.
#pragma once

namespace slotserve::base {

// `threads` > 0: use that many; 0: one per core this process may run on (its affinity mask). Until
// it is called (unit tests, tools that never set it) the pool is the calling thread alone and
// OpenBLAS keeps its own default.
void SetComputeThreads(int threads);

// The number of threads the compute kernels use now.
int ComputeThreads();

// OpenBLAS's own thread count, for measuring OpenBLAS itself (the benchmark's machine anchors:
// what this machine's sgemm reaches on N threads); the engine's kernels run it on one thread
// inside the pool's parts, which SetComputeThreads restores.
void SetOpenBlasThreads(int threads);

}  // namespace slotserve::base
