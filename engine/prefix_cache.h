// Prefix states (docs/ARCHITECTURE.md "Request state"): checkpoints of a request's state taken
// during prefill at every block boundary, kept in host memory under the chained hash of the
// prompt's token blocks, so a later prompt that starts with the same blocks starts from the
// checkpoint and prefills only the rest. A constant-size state makes a checkpoint cost the same at
// token 16 and at token 16,000; for the softmax baseline the checkpoint is its KV cache, which
// grows with length.
//
// Entries are verified token for token on lookup (the hash only finds them), bounded by bytes
// and evicted least recently used first. Engine-thread only: no locks.
#pragma once

#include <cstdint>
#include <list>
#include <optional>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace slotserve::engine {

struct PrefixCacheStats {
  int64_t hits = 0;          // lookups that found a prefix
  int64_t misses = 0;        // lookups that found none
  int64_t tokens_saved = 0;  // prompt tokens not prefilled thanks to hits
  int64_t bytes = 0;         // held now (snapshots and their token prefixes)
  int64_t entries = 0;
  int64_t evictions = 0;
};

class PrefixCache {
 public:
  // `block_tokens` > 0: checkpoints sit at multiples of it. `max_bytes` >= 0 bounds what is
  // held (0 keeps nothing).
  PrefixCache(int block_tokens, int64_t max_bytes);

  struct Hit {
    int tokens = 0;                               // how many prompt tokens the state has absorbed
    const std::vector<uint8_t>* state = nullptr;  // valid until the next Insert
  };

  // The longest cached block-aligned prefix of `prompt` that leaves at least one token to
  // prefill (the last prompt token's logits pick the first generated token), or nullopt.
  // Counts a hit or a miss and marks the entry recently used.
  std::optional<Hit> Lookup(std::span<const int32_t> prompt);

  // Keeps `state` as the state after `prefix` (whose length must be a positive multiple of
  // block_tokens; otherwise ignored). Re-inserting a known prefix only marks it recently used.
  void Insert(std::span<const int32_t> prefix, std::vector<uint8_t> state);

  // Whether a checkpoint of `prefix` would be new (so the engine can skip copying state out).
  bool Wants(std::span<const int32_t> prefix) const;

  int block_tokens() const { return block_tokens_; }
  const PrefixCacheStats& stats() const { return stats_; }

 private:
  struct Entry {
    std::vector<int32_t> tokens;  // the whole prefix, to verify a hash match
    std::vector<uint8_t> state;
    std::list<uint64_t>::iterator recency;
  };
  // Hash of blocks [0, n) chained block by block; hashes[k] covers k+1 blocks.
  std::vector<uint64_t> ChainedHashes(std::span<const int32_t> tokens, size_t blocks) const;
  const Entry* Find(uint64_t key, std::span<const int32_t> prefix) const;
  static int64_t BytesOf(const Entry& entry);
  void EvictToFit();

  const int block_tokens_;
  const int64_t max_bytes_;
  absl::flat_hash_map<uint64_t, Entry> entries_;
  std::list<uint64_t> recency_;  // most recently used first
  PrefixCacheStats stats_;
};

}  // namespace slotserve::engine
