// The API keys of --api-keys-file (one key per line, blank lines and "#" comments ignored),
// reloadable while the server runs (SIGHUP). Only SHA-256 digests of the keys are kept, and a
// presented key is checked by comparing digests in constant time, so neither the comparison's
// timing nor a memory dump gives a key away. Keys are never logged or put in a message.
#pragma once

#include <memory>
#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "base/digest.h"

namespace slotserve::server {

// The keys of a key file's text. INVALID_ARGUMENT naming `file` and the line (never the key)
// for a line with whitespace inside the key (it could not be sent in one header value), and
// when the text holds no key at all (every request would be refused).
absl::StatusOr<std::vector<std::string>> ParseApiKeys(absl::string_view text,
                                                      absl::string_view file);

// The key of an `authorization` header value ("Bearer <key>", scheme case-insensitive), or
// UNAUTHENTICATED saying what was wrong with its form. An empty value means no header.
absl::StatusOr<absl::string_view> BearerKey(absl::string_view authorization);

class ApiKeyStore {
 public:
  // Reads `path` (ParseApiKeys). Errors name --api-keys-file and the path.
  static absl::StatusOr<std::unique_ptr<ApiKeyStore>> Load(std::string path);
  // From keys already read (tests).
  explicit ApiKeyStore(const std::vector<std::string>& keys, std::string path = "");

  // Reads the file again. On success the new keys replace the old ones at once and the
  // number of keys is returned; on failure the old keys stay and the error says why.
  absl::StatusOr<int> Reload();

  // OK when `authorization` is "Bearer <a current key>", else UNAUTHENTICATED with a message
  // for the client (which never quotes what it sent).
  absl::Status Authenticate(absl::string_view authorization) const;

  bool Accepts(absl::string_view key) const;
  int size() const;
  const std::string& path() const { return path_; }

 private:
  static std::vector<base::Digest> DigestsOf(const std::vector<std::string>& keys);

  const std::string path_;
  mutable absl::Mutex mu_;
  std::vector<base::Digest> digests_ ABSL_GUARDED_BY(mu_);
};

}  // namespace slotserve::server
