// State export/import (docs/ARCHITECTURE.md "Request state"): a blob round-trips exactly, and any
// blob that is not exactly what this server would have written for this model — damaged, cut,
// extended, from another model, kind or state dtype, unsigned or signed with another key — is
// refused with a message that says what was wrong.
#include "engine/state_blob.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace slotserve::engine {
namespace {

StateBlobIdentity Identity() {
  StateBlobIdentity identity;
  for (size_t i = 0; i < identity.model_fingerprint.size(); ++i) {
    identity.model_fingerprint[i] = static_cast<uint8_t>(i * 7 + 1);
  }
  identity.attention_kind = "abc";
  identity.payload_bytes = 4 + 60;
  identity.max_tokens = 1 << 20;
  identity.vocab_size = 100;
  return identity;
}

RequestState State(int32_t tokens = 17) {
  RequestState state;
  state.token_count = tokens;
  state.pending_token = 42;
  state.payload.resize(64);
  std::memcpy(state.payload.data(), &tokens, 4);  // StateArena::Save puts the position first
  for (size_t i = 4; i < state.payload.size(); ++i) state.payload[i] = static_cast<uint8_t>(i);
  return state;
}

void ExpectRefused(const absl::StatusOr<RequestState>& imported, const std::string& words) {
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(imported.status().message().find(words), std::string::npos)
      << imported.status().message();
}

TEST(StateBlobTest, RoundTripsUnsignedAndSigned) {
  for (const std::string key : {"", "a secret key"}) {
    const std::vector<uint8_t> blob = ExportStateBlob(State(), Identity(), key);
    absl::StatusOr<RequestState> imported = ImportStateBlob(blob, Identity(), key);
    ASSERT_TRUE(imported.ok()) << imported.status();
    EXPECT_EQ(imported->token_count, 17);
    EXPECT_EQ(imported->pending_token, 42);
    EXPECT_EQ(imported->payload, State().payload);
  }
}

TEST(StateBlobTest, EveryFlippedByteIsRefused) {
  for (const std::string key : {"", "k"}) {
    const std::vector<uint8_t> blob = ExportStateBlob(State(), Identity(), key);
    for (size_t i = 0; i < blob.size(); ++i) {
      std::vector<uint8_t> damaged = blob;
      damaged[i] ^= 0x10;
      EXPECT_FALSE(ImportStateBlob(damaged, Identity(), key).ok()) << "byte " << i;
    }
  }
}

TEST(StateBlobTest, EveryTruncationAndAnAppendedByteAreRefused) {
  const std::vector<uint8_t> blob = ExportStateBlob(State(), Identity(), "");
  for (size_t size = 0; size < blob.size(); ++size) {
    EXPECT_FALSE(ImportStateBlob(std::span<const uint8_t>(blob).first(size), Identity(), "").ok())
        << size;
  }
  std::vector<uint8_t> longer = blob;
  longer.push_back(0);
  ExpectRefused(ImportStateBlob(longer, Identity(), ""), "does not fit");
}

TEST(StateBlobTest, RefusalsSayWhatIsWrong) {
  ExpectRefused(ImportStateBlob(std::vector<uint8_t>{'n', 'o', 'p', 'e'}, Identity(), ""),
                "does not start with \"SLOTSTAT\"");
  StateBlobIdentity other_model = Identity();
  other_model.model_fingerprint[0] ^= 1;
  ExpectRefused(ImportStateBlob(ExportStateBlob(State(), other_model, ""), Identity(), ""),
                "made by another model");
  StateBlobIdentity other_kind = Identity();
  other_kind.attention_kind = "rfa";
  ExpectRefused(ImportStateBlob(ExportStateBlob(State(), other_kind, ""), Identity(), ""),
                "attention kind must be \"abc\", got \"rfa\"");
  StateBlobIdentity f16_cache = Identity();
  f16_cache.state_dtype = kStateDtypeF16KvCache;
  ExpectRefused(ImportStateBlob(ExportStateBlob(State(), f16_cache, ""), Identity(), ""),
                "state dtype must be 0 (f32) for this server, got 1 (f16 KV cache)");
  ExpectRefused(ImportStateBlob(ExportStateBlob(State(), Identity(), ""), f16_cache, ""),
                "state dtype must be 1 (f16 KV cache) for this server, got 0 (f32)");
  EXPECT_TRUE(ImportStateBlob(ExportStateBlob(State(), f16_cache, ""), f16_cache, "").ok());
  StateBlobIdentity bigger = Identity();
  bigger.payload_bytes = 128;
  ExpectRefused(ImportStateBlob(ExportStateBlob(State(), Identity(), ""), bigger, ""),
                "payload must be 128 bytes for this model, got 64");
  ExpectRefused(ImportStateBlob(ExportStateBlob(State(), Identity(), "one"), Identity(), "two"),
                "signature does not verify");
  ExpectRefused(ImportStateBlob(ExportStateBlob(State(), Identity(), "one"), Identity(), ""),
                "no --state-key");
  ExpectRefused(ImportStateBlob(ExportStateBlob(State(), Identity(), ""), Identity(), "one"),
                "unsigned");
  RequestState inconsistent = State();
  inconsistent.token_count = 5;  // the payload says 17
  ExpectRefused(ImportStateBlob(ExportStateBlob(inconsistent, Identity(), ""), Identity(), ""),
                "disagrees with the position");
  StateBlobIdentity short_model = Identity();
  short_model.max_tokens = 10;
  ExpectRefused(ImportStateBlob(ExportStateBlob(State(), Identity(), ""), short_model, ""),
                "token count must be in [0, 10], got 17");
  StateBlobIdentity small_vocabulary = Identity();
  small_vocabulary.vocab_size = 42;  // State()'s pending token is 42
  ExpectRefused(ImportStateBlob(ExportStateBlob(State(), Identity(), ""), small_vocabulary, ""),
                "pending token must be -1 (none) or a token id in [0, 42), got 42");
}

}  // namespace
}  // namespace slotserve::engine
