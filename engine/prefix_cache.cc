#include "engine/prefix_cache.h"

#include <algorithm>
#include <utility>

#include "absl/hash/hash.h"
#include "absl/types/span.h"

namespace slotserve::engine {

PrefixCache::PrefixCache(int block_tokens, int64_t max_bytes)
    : block_tokens_(std::max(block_tokens, 1)), max_bytes_(std::max<int64_t>(max_bytes, 0)) {}

std::vector<uint64_t> PrefixCache::ChainedHashes(std::span<const int32_t> tokens,
                                                 size_t blocks) const {
  std::vector<uint64_t> hashes;
  hashes.reserve(blocks);
  uint64_t chained = 0x736c6f7473657276ull;  // any fixed start
  for (size_t b = 0; b < blocks; ++b) {
    const std::span<const int32_t> block = tokens.subspan(b * block_tokens_, block_tokens_);
    chained = absl::HashOf(chained, absl::MakeConstSpan(block.data(), block.size()));
    hashes.push_back(chained);
  }
  return hashes;
}

const PrefixCache::Entry* PrefixCache::Find(uint64_t key, std::span<const int32_t> prefix) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) return nullptr;
  const std::vector<int32_t>& tokens = it->second.tokens;
  if (!std::equal(tokens.begin(), tokens.end(), prefix.begin(), prefix.end())) return nullptr;
  return &it->second;
}

std::optional<PrefixCache::Hit> PrefixCache::Lookup(std::span<const int32_t> prompt) {
  const size_t usable_blocks = prompt.empty() ? 0 : (prompt.size() - 1) / block_tokens_;
  const std::vector<uint64_t> hashes = ChainedHashes(prompt, usable_blocks);
  for (size_t blocks = usable_blocks; blocks > 0; --blocks) {
    const std::span<const int32_t> prefix = prompt.first(blocks * block_tokens_);
    if (Find(hashes[blocks - 1], prefix) == nullptr) continue;
    Entry& entry = entries_.at(hashes[blocks - 1]);
    recency_.splice(recency_.begin(), recency_, entry.recency);
    ++stats_.hits;
    stats_.tokens_saved += static_cast<int64_t>(prefix.size());
    return Hit{static_cast<int>(prefix.size()), &entry.state};
  }
  ++stats_.misses;
  return std::nullopt;
}

bool PrefixCache::Wants(std::span<const int32_t> prefix) const {
  if (prefix.empty() || prefix.size() % block_tokens_ != 0 || max_bytes_ == 0) return false;
  const size_t blocks = prefix.size() / block_tokens_;
  return Find(ChainedHashes(prefix, blocks).back(), prefix) == nullptr;
}

void PrefixCache::Insert(std::span<const int32_t> prefix, std::vector<uint8_t> state) {
  if (prefix.empty() || prefix.size() % block_tokens_ != 0) return;
  const uint64_t key = ChainedHashes(prefix, prefix.size() / block_tokens_).back();
  if (auto it = entries_.find(key); it != entries_.end()) {
    recency_.splice(recency_.begin(), recency_, it->second.recency);
    return;  // the same key for other tokens (a hash collision) keeps the older entry
  }
  Entry entry{std::vector<int32_t>(prefix.begin(), prefix.end()), std::move(state), {}};
  if (BytesOf(entry) > max_bytes_) return;  // would never fit
  recency_.push_front(key);
  entry.recency = recency_.begin();
  stats_.bytes += BytesOf(entry);
  entries_.emplace(key, std::move(entry));
  stats_.entries = static_cast<int64_t>(entries_.size());
  EvictToFit();
}

int64_t PrefixCache::BytesOf(const Entry& entry) {
  return static_cast<int64_t>(entry.state.size() + entry.tokens.size() * sizeof(int32_t));
}

void PrefixCache::EvictToFit() {
  while (stats_.bytes > max_bytes_ && !recency_.empty()) {
    const uint64_t oldest = recency_.back();
    recency_.pop_back();
    auto it = entries_.find(oldest);
    stats_.bytes -= BytesOf(it->second);
    entries_.erase(it);
    ++stats_.evictions;
  }
  stats_.entries = static_cast<int64_t>(entries_.size());
}

}  // namespace slotserve::engine
