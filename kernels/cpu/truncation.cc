#include "kernels/cpu/truncation.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>

#include "kernels/cpu/finite_mask_avx2.h"

namespace slotserve::kernels::cpu {
namespace {

// Buckets of 1/16 in (max_logit - logit) / temperature, the log of a weight: neighbouring
// buckets' weights differ by 6%, so the bucket where the kept tokens end holds few of them. The
// last finite bucket takes everything lighter than e^-15.9; the marker is for non-finite logits.
constexpr float kBucketsPerUnit = 16.0f;
constexpr int kLastBucket = 254;
constexpr uint8_t kNotFinite = 255;

// How far the buckets' sums (added in no particular order) must pass the target before the
// exact walk is tried: far above their rounding error, far below a token's weight.
constexpr double kMarginOfTotal = 1e-9;

// Buckets per unit of logit. Finite even for a subnormal temperature, so that the top
// logit's depth is 0 * scale = 0, never 0 * inf.
float BucketScale(float temperature) {
  return std::min(kBucketsPerUnit / temperature, std::numeric_limits<float>::max());
}

// bucket_of[i] = min(floor((max_logit - logits[i]) * scale), kLastBucket) for a finite logit,
// kNotFinite for the others; returns how many are finite. Eight at a time: as a scalar loop
// the compiler branched on the clamp, which mispredicts for every other token.
size_t BucketByLogit(std::span<const float> logits, float max_logit, float scale,
                     uint8_t* bucket_of) {
  const size_t n = logits.size();
  const __m256 max = _mm256_set1_ps(max_logit);
  const __m256 times = _mm256_set1_ps(scale);
  const __m256 last = _mm256_set1_ps(static_cast<float>(kLastBucket));
  const __m256i not_finite = _mm256_set1_epi32(kNotFinite);
  size_t finite = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(logits.data() + i);
    const __m256 is_finite = FiniteMask(v);
    // Non-finite lanes give NaN here; min_ps returns its second operand (254) for them, and
    // the blend below replaces it.
    const __m256 depth = _mm256_min_ps(_mm256_mul_ps(_mm256_sub_ps(max, v), times), last);
    const __m256i bucket =
        _mm256_blendv_epi8(not_finite, _mm256_cvttps_epi32(depth), _mm256_castps_si256(is_finite));
    const __m128i words =
        _mm_packus_epi32(_mm256_castsi256_si128(bucket), _mm256_extracti128_si256(bucket, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(bucket_of + i), _mm_packus_epi16(words, words));
    finite += std::popcount(static_cast<unsigned>(_mm256_movemask_ps(is_finite)));
  }
  for (; i < n; ++i) {
    if (!std::isfinite(logits[i])) {
      bucket_of[i] = kNotFinite;
      continue;
    }
    ++finite;
    const float depth = (max_logit - logits[i]) * scale;
    bucket_of[i] = depth < static_cast<float>(kLastBucket) ? static_cast<uint8_t>(depth)
                                                           : uint8_t{kLastBucket};
  }
  return finite;
}

constexpr uint64_t kIdBits = 0xffffffffu;

int32_t IdOf(uint64_t key) { return static_cast<int32_t>(key & kIdBits); }

// Per-bucket sums of `value(id)` over the row's tokens. Consecutive tokens add into four
// histograms in turn: one histogram would chain the adds of tokens in the same bucket (most
// land in the last) through memory.
template <typename T, typename Value>
std::array<T, kLastBucket + 1> BucketSums(std::span<const uint8_t> bucket_of, Value value) {
  std::array<std::array<T, kNotFinite + 1>, 4> partial{};
  for (size_t id = 0; id < bucket_of.size(); ++id) partial[id % 4][bucket_of[id]] += value(id);
  std::array<T, kLastBucket + 1> sums{};
  for (int b = 0; b <= kLastBucket; ++b) {
    sums[b] = partial[0][b] + partial[1][b] + partial[2][b] + partial[3][b];
  }
  return sums;
}

// The first bucket whose running sum, from bucket 0, reaches `goal`; kLastBucket when none
// before it does.
template <typename T>
int BucketReaching(const std::array<T, kLastBucket + 1>& sums, T goal) {
  T reached{};
  for (int b = 0; b < kLastBucket; ++b) {
    reached += sums[b];
    if (reached >= goal) return b;
  }
  return kLastBucket;
}

// The keys of the tokens in buckets 0..last, in id order. Every one of them ranks before
// every token in a later bucket, so they are a prefix of the rank order. 32 buckets are
// compared at a time and only the passing tokens' keys made: often few pass, and which ones is
// as good as random, so a branch per token would mispredict.
void KeysUpTo(std::span<const float> logits, std::span<const uint8_t> bucket_of, int last,
              std::vector<uint64_t>& keys) {
  const size_t n = logits.size();
  keys.clear();
  keys.reserve(n);
  const auto add = [&](size_t id) {
    keys.push_back(RankKey(logits[id], static_cast<int32_t>(id)));
  };
  const __m256i limit = _mm256_set1_epi8(static_cast<char>(last));
  size_t first = 0;
  for (; first + 32 <= n; first += 32) {
    const __m256i buckets =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bucket_of.data() + first));
    // Unsigned bucket <= last exactly where max(bucket, last) == last.
    const __m256i passes = _mm256_cmpeq_epi8(_mm256_max_epu8(buckets, limit), limit);
    for (auto mask = static_cast<uint32_t>(_mm256_movemask_epi8(passes)); mask != 0;
         mask &= mask - 1) {
      add(first + static_cast<size_t>(std::countr_zero(mask)));
    }
  }
  for (size_t id = first; id < n; ++id) {
    if (bucket_of[id] <= last) add(id);
  }
}

// The ids of `keys` (id order) that rank no later than `boundary` and weigh at least `floor`.
void IdsUpTo(std::span<const uint64_t> keys, std::span<const double> weights, uint64_t boundary,
             double floor, std::vector<int32_t>& ids) {
  ids.resize(keys.size());
  size_t kept = 0;
  for (uint64_t key : keys) {
    ids[kept] = IdOf(key);
    kept += (key <= boundary) & (weights[IdOf(key)] >= floor);
  }
  ids.resize(kept);
}

// The top-p rule over `candidates` (every finite token's key, in id order) as written: the
// tokens at least `floor` heavy sorted and walked until their sum reaches `target`. For a row
// where the buckets' estimate fell short.
void NucleusBySort(std::span<const uint64_t> candidates, std::span<const double> weights,
                   double target, double floor, std::vector<uint64_t>& ranked,
                   std::vector<int32_t>& ids) {
  ranked.clear();
  for (uint64_t key : candidates) {
    if (weights[IdOf(key)] >= floor) ranked.push_back(key);
  }
  std::sort(ranked.begin(), ranked.end());
  uint64_t boundary = std::numeric_limits<uint64_t>::max();  // every survivor, if none reaches
  double cumulative = 0.0;
  for (uint64_t key : ranked) {
    cumulative += weights[IdOf(key)];
    if (cumulative >= target) {
      boundary = key;
      break;
    }
  }
  IdsUpTo(candidates, weights, boundary, floor, ids);
}

// The top_k first tokens in rank order, into `keys` in id order (0 < top_k < finite tokens):
// the keys up to the bucket where the count reaches top_k, cut at the top_k-th smallest.
void TopKKeys(std::span<const float> logits, std::span<const uint8_t> bucket_of, int32_t top_k,
              std::vector<uint64_t>& keys, std::vector<uint64_t>& scratch) {
  const auto counts = BucketSums<uint32_t>(bucket_of, [](size_t) { return 1u; });
  KeysUpTo(logits, bucket_of, BucketReaching<uint32_t>(counts, top_k), keys);
  if (keys.size() == static_cast<size_t>(top_k)) return;
  scratch.assign(keys.begin(), keys.end());
  std::nth_element(scratch.begin(), scratch.begin() + (top_k - 1), scratch.end());
  const uint64_t boundary = scratch[top_k - 1];
  std::erase_if(keys, [boundary](uint64_t key) { return key > boundary; });
}

// The rule's walk over `ranked` (grouped by bucket, bucket b at [start[b], start[b + 1])),
// sorting each bucket as it reaches it: the key of the token whose cumulative weight reaches
// `target`. The rule ranks only tokens at least `floor` heavy; its walk ends at the same token
// when none before it is lighter (weights follow logits, but only within the exponential's
// 2 ulp). Nothing when that does not hold or the walk falls short.
std::optional<uint64_t> WalkByBucket(std::span<uint64_t> ranked,
                                     const std::array<uint32_t, kLastBucket + 2>& start,
                                     std::span<const double> weights, double target, double floor) {
  double cumulative = 0.0;
  for (int b = 0; b <= kLastBucket; ++b) {
    const auto first = ranked.begin() + start[b];
    const auto end = ranked.begin() + start[b + 1];
    std::sort(first, end);
    for (auto it = first; it != end; ++it) {
      const double weight = weights[IdOf(*it)];
      if (weight < floor) return std::nullopt;
      cumulative += weight;
      if (cumulative >= target) return *it;
    }
  }
  return std::nullopt;
}

// The top-p nucleus over every finite token, into `ids` in id order; `total` is every weight
// added in id order.
void NucleusOfAll(std::span<const float> logits, std::span<const double> weights, double total,
                  std::span<const uint8_t> bucket_of, size_t finite, float top_p,
                  std::vector<uint64_t>& keys, std::vector<uint64_t>& ranked,
                  std::vector<int32_t>& ids) {
  const double target = top_p * total;
  const double floor = (1.0 - top_p) * total / (2.0 * static_cast<double>(finite));
  const auto bucket_weights = BucketSums<double>(bucket_of, [&](size_t id) { return weights[id]; });
  KeysUpTo(logits, bucket_of,
           BucketReaching<double>(bucket_weights, target + kMarginOfTotal * total), keys);

  // Rank order, bucket by bucket: a counting sort by bucket, then each bucket's few keys sorted
  // when the walk reaches it, so the buckets past the boundary are never sorted.
  std::array<uint32_t, kLastBucket + 2> bucket_start{};
  for (uint64_t key : keys) ++bucket_start[bucket_of[IdOf(key)] + 1];
  for (int b = 0; b <= kLastBucket; ++b) bucket_start[b + 1] += bucket_start[b];
  std::array<uint32_t, kLastBucket + 2> next = bucket_start;
  ranked.resize(keys.size());
  for (uint64_t key : keys) ranked[next[bucket_of[IdOf(key)]]++] = key;

  const std::optional<uint64_t> last_kept =
      WalkByBucket(ranked, bucket_start, weights, target, floor);
  if (last_kept.has_value()) {
    IdsUpTo(keys, weights, *last_kept, 0.0, ids);
  } else {
    KeysUpTo(logits, bucket_of, kLastBucket, keys);  // every finite token
    NucleusBySort(keys, weights, target, floor, ranked, ids);
  }
}

// A row bucketed by logit, in this thread's buffers (kept across rows and steps).
struct BucketedRow {
  std::vector<uint8_t> bucket_of;
  size_t finite = 0;  // tokens with a finite logit
  std::vector<uint64_t> keys;
  std::vector<uint64_t> scratch;
};

BucketedRow& Bucketed(std::span<const float> logits, float max_logit, float temperature) {
  thread_local BucketedRow row;
  row.bucket_of.resize(logits.size());
  // By logit, not by weight: the rank order is the logits', and a bucket computed by monotone
  // float steps keeps a higher logit in the same or an earlier bucket.
  row.finite = BucketByLogit(logits, max_logit, BucketScale(temperature), row.bucket_of.data());
  return row;
}

}  // namespace

uint64_t RankKey(float logit, int32_t id) {
  const uint32_t bits = std::bit_cast<uint32_t>(logit + 0.0f);
  // Negative: all bits flipped; positive: the sign bit set. Without a branch, which would
  // mispredict on every other token.
  const uint32_t ascending = bits ^ ((0u - (bits >> 31)) | 0x80000000u);
  return (uint64_t{~ascending} << 32) | static_cast<uint32_t>(id);
}

void TopKIds(std::span<const float> logits, float max_logit, float temperature, int32_t top_k,
             std::vector<int32_t>& ids) {
  BucketedRow& row = Bucketed(logits, max_logit, temperature);
  if (static_cast<size_t>(top_k) < row.finite) {
    TopKKeys(logits, row.bucket_of, top_k, row.keys, row.scratch);
  } else {
    KeysUpTo(logits, row.bucket_of, kLastBucket, row.keys);  // every finite token
  }
  ids.resize(row.keys.size());
  std::transform(row.keys.begin(), row.keys.end(), ids.begin(), IdOf);
}

void TopPIds(std::span<const float> logits, std::span<const double> weights, float max_logit,
             double weight_total, float temperature, float top_p, std::vector<int32_t>& ids) {
  BucketedRow& row = Bucketed(logits, max_logit, temperature);
  ids.clear();
  if (row.finite == 0) return;
  NucleusOfAll(logits, weights, weight_total, row.bucket_of, row.finite, top_p, row.keys,
               row.scratch, ids);
}

}  // namespace slotserve::kernels::cpu
