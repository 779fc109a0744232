// Software prefetch hints for the step kernels' reads of per-request state. At large batches a
// step reads every request's state (a softmax KV cache, an ABC memory) once, from memory, in
// short runs that start somewhere new for every (request, head) pair; the hardware prefetchers
// lose the stream at each new start. These helpers let a kernel ask for the lines it (or its
// next pair) will read while it computes on the current ones. They are hints: they never fault,
// change no value, and compile to nothing without SSE.
#pragma once

#include <cstdint>

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace slotserve::kernels::cpu {

enum class PrefetchTo {
  kL1,  // soon read by this loop
  kL2,  // read by the next call: into L1 it would evict the lines being read (for the softmax
        // step's next pair, T0 measured half as fast as T1)
};

// Asks for the cache lines of bytes [begin, begin + size).
template <PrefetchTo To = PrefetchTo::kL1>
inline void PrefetchBytes(const void* begin, int64_t size) {
#if defined(__SSE__)
  const char* bytes = static_cast<const char*>(begin);
  for (int64_t offset = 0; offset < size; offset += 64) {
    _mm_prefetch(bytes + offset, To == PrefetchTo::kL1 ? _MM_HINT_T0 : _MM_HINT_T1);
  }
#else
  (void)begin;
  (void)size;
#endif
}

// The cache lines of row[0 .. d).
template <PrefetchTo To = PrefetchTo::kL1, typename Element>
inline void PrefetchRow(const Element* row, int d) {
  PrefetchBytes<To>(row, int64_t{d} * static_cast<int64_t>(sizeof(Element)));
}

// Part `part` of `parts` equal parts of bytes [begin, begin + size), in whole cache lines, into
// L2: a loop of `parts` iterations that calls this once per iteration asks for the whole span,
// spread evenly over its work.
inline void PrefetchPart(const void* begin, int64_t size, int part, int parts) {
  const int64_t lines = (size + 63) / 64;
  const int64_t first = lines * part / parts;
  const int64_t last = lines * (part + 1) / parts;
  PrefetchBytes<PrefetchTo::kL2>(static_cast<const char*>(begin) + first * 64, (last - first) * 64);
}

// A span to prefetch in parts over a loop: the state of the (request, head) pair a step kernel
// handles next, asked for a slice per iteration of the current pair's main loop, so that the
// next pair starts on lines already in L2. Empty (begin == nullptr): nothing to ask for.
struct PrefetchSpan {
  const void* begin = nullptr;
  int64_t bytes = 0;

  void Part(int part, int parts) const {
    if (begin != nullptr) PrefetchPart(begin, bytes, part, parts);
  }
};

}  // namespace slotserve::kernels::cpu
