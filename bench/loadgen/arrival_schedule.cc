#include "bench/loadgen/arrival_schedule.h"

#include <random>

namespace slotserve::bench {

std::vector<double> ArrivalOffsets(int requests, double rate_per_s, uint64_t seed) {
  std::vector<double> offsets(requests > 0 ? requests : 0, 0.0);
  if (rate_per_s <= 0) return offsets;
  std::mt19937_64 generator(seed);
  std::exponential_distribution<double> gap(rate_per_s);
  for (size_t i = 1; i < offsets.size(); ++i) offsets[i] = offsets[i - 1] + gap(generator);
  return offsets;
}

}  // namespace slotserve::bench
