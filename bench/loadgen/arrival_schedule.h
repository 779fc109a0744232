// When each request of a load-generator run is sent: a Poisson process (exponential gaps with
// mean 1/rate, from a seeded generator, so a run is reproducible) or, with rate 0, all at once
// (a fixed-concurrency burst).
#pragma once

#include <cstdint>
#include <vector>

namespace slotserve::bench {

// Offsets in seconds from the start of the run, ascending; the first request goes at 0.
std::vector<double> ArrivalOffsets(int requests, double rate_per_s, uint64_t seed);

}  // namespace slotserve::bench
