// The machine's own limits, measured in the same run as the model benchmarks so that every
// model number can be quoted as a fraction of what the hardware did at that moment:
//  - memory bandwidth with a STREAM-like copy (and a read-only sum), which bounds batch-1
//    decode: each step has to read every weight once;
//  - OpenBLAS sgemm FLOP/s, which bounds large-batch decode, where the step is a few GEMMs.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "bench/timing.h"

namespace slotserve::bench {

struct BandwidthOptions {
  int64_t bytes_per_array = int64_t{128} << 20;  // well beyond any last-level cache
  int threads = 1;
  RepeatPlan plan{.warmup = 1, .repeats = 7};
};

struct Bandwidth {
  // STREAM's convention: copy counts the bytes read plus the bytes written (no write-allocate).
  double copy_bytes_per_s = 0;
  double read_bytes_per_s = 0;
};

absl::StatusOr<Bandwidth> MeasureBandwidth(const BandwidthOptions& options);

// y[m, n] = x[m, k] * w[n, k]^T, the layout of every Linear in the model, with OpenBLAS on the
// calling thread count (openblas_set_num_threads is the caller's business).
struct GemmShape {
  int m = 1024;
  int n = 1024;
  int k = 1024;
};

// FLOP/s (2*m*n*k per call), median over the plan's repeats.
absl::StatusOr<double> MeasureSgemmFlops(const GemmShape& shape, const RepeatPlan& plan);

// The same product for one row (m = 1) with cblas_sgemv, which streams w once without packing
// it: what a batch-1 Linear can reach. FLOP/s (2*n*k per call).
absl::StatusOr<double> MeasureSgemvFlops(int n, int k, const RepeatPlan& plan);

}  // namespace slotserve::bench
