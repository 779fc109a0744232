#include "server/api_keys.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "server/flag_file.h"

namespace slotserve::server {
namespace {

constexpr char kFlag[] = "--api-keys-file";
constexpr absl::string_view kScheme = "Bearer";

base::Digest DigestOf(absl::string_view key) {
  return base::Sha256Of(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(key.data()), key.size()));
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ParseApiKeys(absl::string_view text,
                                                      absl::string_view file) {
  std::vector<std::string> keys;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    // Editors on other systems end lines with "\r\n"; whitespace around a key is never part
    // of it.
    const absl::string_view key = absl::StripAsciiWhitespace(line);
    if (key.empty() || absl::StartsWith(key, "#")) continue;
    for (char c : key) {
      if (absl::ascii_isspace(static_cast<unsigned char>(c))) {
        return absl::InvalidArgumentError(
            absl::StrCat(kFlag, "=", file, ": line ", line_number,
                         " has whitespace inside its key (one key per line, no spaces)"));
      }
    }
    keys.emplace_back(key);
  }
  if (keys.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kFlag, "=", file,
                     ": no keys in the file (every request would be refused); one key per line"));
  }
  return keys;
}

absl::StatusOr<absl::string_view> BearerKey(absl::string_view authorization) {
  if (authorization.empty()) {
    return absl::UnauthenticatedError(
        "this server requires an API key: send the header 'authorization: Bearer <key>'");
  }
  const absl::string_view value = absl::StripAsciiWhitespace(authorization);
  if (value.size() <= kScheme.size() ||
      !absl::EqualsIgnoreCase(value.substr(0, kScheme.size()), kScheme) ||
      !absl::ascii_isspace(static_cast<unsigned char>(value[kScheme.size()]))) {
    return absl::UnauthenticatedError(
        "the authorization header must be 'Bearer <key>' (another scheme was sent)");
  }
  return absl::StripLeadingAsciiWhitespace(value.substr(kScheme.size()));
}

absl::StatusOr<std::unique_ptr<ApiKeyStore>> ApiKeyStore::Load(std::string path) {
  auto store = std::make_unique<ApiKeyStore>(std::vector<std::string>{}, std::move(path));
  absl::StatusOr<int> loaded = store->Reload();
  if (!loaded.ok()) return loaded.status();
  return store;
}

ApiKeyStore::ApiKeyStore(const std::vector<std::string>& keys, std::string path)
    : path_(std::move(path)), digests_(DigestsOf(keys)) {}

std::vector<base::Digest> ApiKeyStore::DigestsOf(const std::vector<std::string>& keys) {
  std::vector<base::Digest> digests;
  digests.reserve(keys.size());
  for (const std::string& key : keys) digests.push_back(DigestOf(key));
  return digests;
}

absl::StatusOr<int> ApiKeyStore::Reload() {
  absl::StatusOr<std::string> text = ReadFlagFile(kFlag, path_);
  if (!text.ok()) return text.status();
  absl::StatusOr<std::vector<std::string>> keys = ParseApiKeys(*text, path_);
  if (!keys.ok()) return keys.status();
  std::vector<base::Digest> digests = DigestsOf(*keys);
  absl::MutexLock lock(&mu_);
  digests_ = std::move(digests);
  return static_cast<int>(digests_.size());
}

bool ApiKeyStore::Accepts(absl::string_view key) const {
  const base::Digest presented = DigestOf(key);
  bool match = false;
  absl::MutexLock lock(&mu_);
  // Every digest is compared, so the time taken does not depend on which key matched.
  for (const base::Digest& digest : digests_) match |= base::DigestsEqual(presented, digest);
  return match;
}

absl::Status ApiKeyStore::Authenticate(absl::string_view authorization) const {
  absl::StatusOr<absl::string_view> key = BearerKey(authorization);
  if (!key.ok()) return key.status();
  if (!Accepts(*key)) return absl::UnauthenticatedError("the API key is not valid");
  return absl::OkStatus();
}

int ApiKeyStore::size() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(digests_.size());
}

}  // namespace slotserve::server
