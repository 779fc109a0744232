// system_fingerprint: OpenAI's shape, the same for the same setup, and a different one when any
// part that decides a seeded request's tokens differs.
#include "server/system_fingerprint.h"

#include <gtest/gtest.h>

#include <set>

#include "absl/strings/match.h"

namespace slotserve::server {
namespace {

FingerprintedSetup BaseSetup() {
  FingerprintedSetup setup;
  setup.model_fingerprint.fill(7);
  setup.version = "0.1.0";
  setup.backend = "cpu";
  setup.kv_cache_dtype = "f32";
  return setup;
}

TEST(SystemFingerprintTest, HasOpenAisShapeAndIsStable) {
  const std::string fingerprint = SystemFingerprint(BaseSetup());
  EXPECT_TRUE(absl::StartsWith(fingerprint, "fp_")) << fingerprint;
  EXPECT_EQ(fingerprint.size(), 15u) << fingerprint;
  EXPECT_EQ(fingerprint.find_first_not_of("0123456789abcdef", 3), std::string::npos) << fingerprint;
  EXPECT_EQ(SystemFingerprint(BaseSetup()), fingerprint);
}

TEST(SystemFingerprintTest, EachPartChangesIt) {
  std::set<std::string> seen = {SystemFingerprint(BaseSetup())};
  FingerprintedSetup other_weights = BaseSetup();
  other_weights.model_fingerprint[31] = 8;
  FingerprintedSetup other_build = BaseSetup();
  other_build.version = "0.2.0";
  FingerprintedSetup other_backend = BaseSetup();
  other_backend.backend = "cuda";
  FingerprintedSetup other_dtype = BaseSetup();
  other_dtype.kv_cache_dtype = "f16";
  FingerprintedSetup int8 = BaseSetup();
  int8.int8_activations = true;
  // Parts are delimited: moving a character from one part to the next is another setup.
  FingerprintedSetup shifted = BaseSetup();
  shifted.version = "0.1.0c";
  shifted.backend = "pu";
  for (const FingerprintedSetup& setup :
       {other_weights, other_build, other_backend, other_dtype, int8, shifted}) {
    EXPECT_TRUE(seen.insert(SystemFingerprint(setup)).second)
        << setup.version << " " << setup.backend << " " << setup.kv_cache_dtype;
  }
}

}  // namespace
}  // namespace slotserve::server
