// Splits a cpu kernel's independent items (rows of a decode batch, heads, output features)
// between the engine's compute threads (base/worker_pool.h). Small jobs stay on the calling
// thread: a hand-off costs about a microsecond, so only work of a few tens of microseconds or
// more is split.
#pragma once

#include <algorithm>
#include <cstdint>

#include "base/worker_pool.h"

namespace slotserve::kernels::cpu {

// Multiply-adds (or comparable steps) below which a job runs on the calling thread.
inline constexpr int64_t kMinParallelWork = 64 * 1024;

// Calls body(begin, end) over consecutive ranges covering [0, items), in parallel when
// `work` (the job's total cost in multiply-adds) is large enough. Ranges start at multiples
// of `grain`, so items that share a cache line can stay together.
template <typename Body>
void ParallelFor(int items, int64_t work, Body&& body, int grain = 1) {
  base::WorkerPool& pool = base::WorkerPool::Instance();
  if (items <= grain || pool.threads() == 1 || work < kMinParallelWork) {
    body(0, items);
    return;
  }
  const int chunks = (items + grain - 1) / grain;
  pool.Run([&](int part, int parts) {
    const int begin = std::min(items, static_cast<int>(int64_t{chunks} * part / parts) * grain);
    const int end = std::min(items, static_cast<int>(int64_t{chunks} * (part + 1) / parts) * grain);
    if (begin < end) body(begin, end);
  });
}

}  // namespace slotserve::kernels::cpu
