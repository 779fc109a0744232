#include "bench/machine_anchors.h"

#include <cblas.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace slotserve::bench {
namespace {

// Runs fn(part, first, last) over [0, count) split into `threads` contiguous parts, one per
// thread.
template <typename Fn>
void ParallelFor(int64_t count, int threads, Fn&& fn) {
  if (threads <= 1) {
    fn(0, int64_t{0}, count);
    return;
  }
  std::vector<std::thread> workers;
  const int64_t part_size = (count + threads - 1) / threads;
  for (int part = 0; part < threads; ++part) {
    const int64_t first = std::min(count, part * part_size);
    const int64_t last = std::min(count, first + part_size);
    workers.emplace_back([&fn, part, first, last] { fn(part, first, last); });
  }
  for (auto& worker : workers) worker.join();
}

}  // namespace

absl::StatusOr<Bandwidth> MeasureBandwidth(const BandwidthOptions& options) {
  if (options.bytes_per_array < 1024 || options.threads < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("MeasureBandwidth: need bytes_per_array >= 1024 and threads >= 1, got ",
                     options.bytes_per_array, " and ", options.threads));
  }
  const int64_t count = options.bytes_per_array / static_cast<int64_t>(sizeof(float));
  std::vector<float> source(count), destination(count);
  // Touch both arrays from the threads that will use them (first-touch page placement).
  ParallelFor(count, options.threads, [&](int /*part*/, int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) {
      source[i] = static_cast<float>(i & 1023);
      destination[i] = 0;
    }
  });

  Bandwidth result;
  absl::StatusOr<Timing> copy = TimeRepeats(options.plan, 1, nullptr, [&]() -> absl::Status {
    ParallelFor(count, options.threads, [&](int /*part*/, int64_t first, int64_t last) {
      float* __restrict out = destination.data();
      const float* __restrict in = source.data();
      for (int64_t i = first; i < last; ++i) out[i] = in[i];
    });
    return absl::OkStatus();
  });
  SLOTSERVE_RETURN_IF_ERROR(copy.status());
  result.copy_bytes_per_s = 2.0 * options.bytes_per_array / copy->median;

  std::vector<double> partial_sums(options.threads);
  absl::StatusOr<Timing> read = TimeRepeats(options.plan, 1, nullptr, [&]() -> absl::Status {
    ParallelFor(count, options.threads, [&](int part, int64_t first, int64_t last) {
      // Eight accumulators so the adds are not one serial dependency chain.
      float sums[8] = {};
      int64_t i = first;
      for (; i + 8 <= last; i += 8) {
        for (int lane = 0; lane < 8; ++lane) sums[lane] += source[i + lane];
      }
      for (; i < last; ++i) sums[0] += source[i];
      double total = 0;
      for (float s : sums) total += s;
      partial_sums[part] = total;
    });
    return absl::OkStatus();
  });
  SLOTSERVE_RETURN_IF_ERROR(read.status());
  result.read_bytes_per_s = options.bytes_per_array / read->median;
  // Keep the sums observable so the reads cannot be optimised away.
  volatile double sink = 0;
  for (double s : partial_sums) sink = sink + s;
  (void)sink;
  return result;
}

namespace {

void FillPattern(std::vector<float>& values, int multiplier, int modulus) {
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<float>((i * multiplier) % modulus) / modulus - 0.5f;
  }
}

}  // namespace

absl::StatusOr<double> MeasureSgemmFlops(const GemmShape& shape, const RepeatPlan& plan) {
  if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("MeasureSgemmFlops: shape must be positive, got m ", shape.m, " n ", shape.n,
                     " k ", shape.k));
  }
  std::vector<float> x(static_cast<size_t>(shape.m) * shape.k);
  std::vector<float> w(static_cast<size_t>(shape.n) * shape.k);
  std::vector<float> y(static_cast<size_t>(shape.m) * shape.n);
  FillPattern(x, 7, 13);
  FillPattern(w, 5, 11);
  absl::StatusOr<Timing> timing = TimeRepeats(plan, 1, nullptr, [&]() -> absl::Status {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, shape.m, shape.n, shape.k, 1.0f, x.data(),
                shape.k, w.data(), shape.k, 0.0f, y.data(), shape.n);
    return absl::OkStatus();
  });
  SLOTSERVE_RETURN_IF_ERROR(timing.status());
  return 2.0 * shape.m * shape.n * shape.k / timing->median;
}

absl::StatusOr<double> MeasureSgemvFlops(int n, int k, const RepeatPlan& plan) {
  if (n <= 0 || k <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("MeasureSgemvFlops: shape must be positive, got n ", n, " k ", k));
  }
  std::vector<float> x(k), w(static_cast<size_t>(n) * k), y(n);
  FillPattern(x, 7, 13);
  FillPattern(w, 5, 11);
  absl::StatusOr<Timing> timing = TimeRepeats(plan, 1, nullptr, [&]() -> absl::Status {
    cblas_sgemv(CblasRowMajor, CblasNoTrans, n, k, 1.0f, w.data(), k, x.data(), 1, 0.0f, y.data(),
                1);
    return absl::OkStatus();
  });
  SLOTSERVE_RETURN_IF_ERROR(timing.status());
  return 2.0 * n * k / timing->median;
}

}  // namespace slotserve::bench
