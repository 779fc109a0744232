// OpenAI's system_fingerprint: one short name for everything on the server side that decides
// which tokens a seeded request gets, so a client comparing two answers can tell whether a
// difference may come from the server rather than from sampling (OpenAI changes it with its
// backend configuration). Here: the model's fingerprint (model_fingerprint.h), the build's
// version, the backend and the numerics that change results (--kv-cache-dtype,
// --int8-activations). "fp_" and 12 hex digits of their SHA-256, as OpenAI's look.
#pragma once

#include <string>

#include "absl/strings/string_view.h"
#include "base/digest.h"

namespace slotserve::server {

struct FingerprintedSetup {
  base::Digest model_fingerprint{};
  std::string version;         // SLOTSERVE_VERSION
  std::string backend;         // "cpu", "cuda", "reference"
  std::string kv_cache_dtype;  // "f32", ...
  bool int8_activations = false;
};

std::string SystemFingerprint(const FingerprintedSetup& setup);

}  // namespace slotserve::server
