// The API key file's parser, the Bearer header's parsing and the key store's checks and
// reloads (server/api_keys.h).
#include "server/api_keys.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include "absl/strings/match.h"

namespace slotserve::server {
namespace {

TEST(ParseApiKeysTest, OneKeyPerLineSkippingBlanksAndComments) {
  absl::StatusOr<std::vector<std::string>> keys =
      ParseApiKeys("# team a\nkey-one\n\n   \n  key-two  \r\n#key-three\nkey-four", "keys.txt");
  ASSERT_TRUE(keys.ok()) << keys.status();
  EXPECT_EQ(*keys, (std::vector<std::string>{"key-one", "key-two", "key-four"}));
}

TEST(ParseApiKeysTest, RefusesAFileWithoutKeys) {
  absl::StatusOr<std::vector<std::string>> keys = ParseApiKeys("# nothing yet\n\n", "keys.txt");
  ASSERT_EQ(keys.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(keys.status().message(), "--api-keys-file=keys.txt"));
  EXPECT_TRUE(absl::StrContains(keys.status().message(), "no keys"));
}

TEST(ParseApiKeysTest, RefusesWhitespaceInsideAKeyNamingTheLineNotTheKey) {
  absl::StatusOr<std::vector<std::string>> keys =
      ParseApiKeys("good\nsecret part-two\n", "keys.txt");
  ASSERT_EQ(keys.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(keys.status().message(), "line 2")) << keys.status();
  EXPECT_FALSE(absl::StrContains(keys.status().message(), "secret")) << keys.status();
}

TEST(BearerKeyTest, TakesTheKeyAfterTheScheme) {
  EXPECT_EQ(*BearerKey("Bearer abc"), "abc");
  EXPECT_EQ(*BearerKey("bearer   abc "), "abc");
  EXPECT_EQ(*BearerKey("BEARER abc"), "abc");
}

TEST(BearerKeyTest, RefusesAMissingHeaderAndOtherSchemes) {
  for (const char* value : {"", "Basic dXNlcjpwYXNz", "Bearer", "Bearerabc", "abc"}) {
    EXPECT_EQ(BearerKey(value).status().code(), absl::StatusCode::kUnauthenticated) << value;
  }
}

TEST(ApiKeyStoreTest, AcceptsExactlyItsKeys) {
  const ApiKeyStore store({"alpha", "beta"});
  EXPECT_TRUE(store.Accepts("alpha"));
  EXPECT_TRUE(store.Accepts("beta"));
  EXPECT_FALSE(store.Accepts("alph"));
  EXPECT_FALSE(store.Accepts("alphaa"));
  EXPECT_FALSE(store.Accepts(""));
  EXPECT_EQ(store.size(), 2);
}

TEST(ApiKeyStoreTest, AuthenticatesBearerHeadersWithoutQuotingTheKey) {
  const ApiKeyStore store({"alpha"});
  EXPECT_TRUE(store.Authenticate("Bearer alpha").ok());
  const absl::Status wrong = store.Authenticate("Bearer not-the-key");
  EXPECT_EQ(wrong.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_FALSE(absl::StrContains(wrong.message(), "not-the-key")) << wrong;
  EXPECT_EQ(store.Authenticate("").code(), absl::StatusCode::kUnauthenticated);
}

class KeyFile {
 public:
  KeyFile() {
    char name[] = "/tmp/slotserve-api-keys-XXXXXX";
    const int fd = mkstemp(name);
    close(fd);
    path_ = name;
  }
  ~KeyFile() { std::remove(path_.c_str()); }
  void Write(const std::string& text) const { std::ofstream(path_, std::ios::trunc) << text; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(ApiKeyStoreTest, ReloadReplacesTheKeys) {
  KeyFile file;
  file.Write("old\nkept\n");
  absl::StatusOr<std::unique_ptr<ApiKeyStore>> store = ApiKeyStore::Load(file.path());
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_TRUE((*store)->Accepts("old"));
  file.Write("kept\nnew\n");
  absl::StatusOr<int> reloaded = (*store)->Reload();
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  EXPECT_EQ(*reloaded, 2);
  EXPECT_FALSE((*store)->Accepts("old"));
  EXPECT_TRUE((*store)->Accepts("kept"));
  EXPECT_TRUE((*store)->Accepts("new"));
}

TEST(ApiKeyStoreTest, AFailedReloadKeepsTheOldKeys) {
  KeyFile file;
  file.Write("old\n");
  absl::StatusOr<std::unique_ptr<ApiKeyStore>> store = ApiKeyStore::Load(file.path());
  ASSERT_TRUE(store.ok()) << store.status();
  file.Write("# emptied by mistake\n");
  EXPECT_EQ((*store)->Reload().status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE((*store)->Accepts("old"));
  std::remove(file.path().c_str());
  EXPECT_EQ((*store)->Reload().status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE((*store)->Accepts("old"));
}

TEST(ApiKeyStoreTest, LoadNamesTheFlagAndFile) {
  absl::StatusOr<std::unique_ptr<ApiKeyStore>> store =
      ApiKeyStore::Load("/nonexistent/slotserve-keys");
  ASSERT_FALSE(store.ok());
  EXPECT_TRUE(
      absl::StrContains(store.status().message(), "--api-keys-file=/nonexistent/slotserve-keys"))
      << store.status();
}

}  // namespace
}  // namespace slotserve::server
