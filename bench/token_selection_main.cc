// Token selection alone (kernels/sampling.h), per row: the cpu backend's LaunchSampling on 64
// rows of vocabulary 4,000, normal logits (sigma 3, the same every run), one compute thread,
// for a fixed list of temperature / top-k / top-p cases. Prints the median, p10 and p90 of
// microseconds per row over 60 calls, and a checksum of every token drawn, so two builds can
// be compared both for speed and for drawing the same tokens (docs/CPU_SPEED_LOG.md).
//   slotserve-bench-selection [rounds]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "kernels/backend.h"
#include "kernels/sampling.h"

namespace {

using slotserve::kernels::Backend;
using slotserve::kernels::LaunchSampling;
using slotserve::kernels::SamplingParams;

constexpr int kRows = 64;
constexpr int kVocab = 4000;
constexpr int kCalls = 60;

struct Case {
  float temperature;
  int32_t top_k;
  float top_p;
};

void TimeCase(const Case& c, const std::vector<float>& logits) {
  std::vector<float> scratch;
  std::vector<float> temperature(kRows, c.temperature), top_p(kRows, c.top_p);
  std::vector<int32_t> top_k(kRows, c.top_k), tokens(kRows);
  std::vector<uint64_t> seeds(kRows), draw_index(kRows);
  for (int r = 0; r < kRows; ++r) seeds[r] = 100 + r;
  std::vector<double> micros;
  uint64_t checksum = 0;
  for (int call = 0; call < kCalls; ++call) {
    scratch = logits;  // adjusted in place
    std::fill(draw_index.begin(), draw_index.end(), call);
    // No adjustments and no min_p: null means off for every row.
    const SamplingParams p{.logits = scratch.data(),
                           .logits_stride = kVocab,
                           .rows = kRows,
                           .vocab = kVocab,
                           .temperature = temperature.data(),
                           .top_k = top_k.data(),
                           .top_p = top_p.data(),
                           .seeds = seeds.data(),
                           .draw_index = draw_index.data(),
                           .out_tokens = tokens.data()};
    const auto start = std::chrono::steady_clock::now();
    LaunchSampling(Backend::kCpu, p);
    const auto end = std::chrono::steady_clock::now();
    micros.push_back(std::chrono::duration<double, std::micro>(end - start).count() / kRows);
    for (int32_t token : tokens) checksum = checksum * 31 + static_cast<uint64_t>(token);
  }
  std::sort(micros.begin(), micros.end());
  std::printf("| %.2f | %d | %.2f | %.1f | %.1f | %.1f | %016llx |\n", c.temperature, c.top_k,
              c.top_p, micros[kCalls / 2], micros[kCalls / 10], micros[kCalls * 9 / 10],
              static_cast<unsigned long long>(checksum));
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 1;
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> logits(kRows * kVocab);
  for (float& x : logits) x = normal(rng);
  const std::vector<Case> cases = {{0.8f, 0, 1.0f},  {0.8f, 0, 0.9f}, {0.8f, 0, 0.95f},
                                   {1.0f, 0, 0.95f}, {0.7f, 0, 0.5f}, {2.0f, 0, 0.9f},
                                   {0.8f, 50, 1.0f}, {0.8f, 50, 0.9f}};
  std::printf("| temperature | top_k | top_p | us/row median | p10 | p90 | tokens checksum |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---|\n");
  for (int round = 0; round < rounds; ++round) {
    for (const Case& c : cases) TimeCase(c, logits);
  }
  return 0;
}
