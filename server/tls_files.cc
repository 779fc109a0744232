#include "server/tls_files.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "server/flag_file.h"

namespace slotserve::server {
namespace {

// OpenSSL's reason for the last failure, for the message (its error queue is per thread).
std::string OpenSslReason() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "no PEM data found";
  char buffer[256];
  ERR_error_string_n(code, buffer, sizeof(buffer));
  return buffer;
}

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct X509Free {
  void operator()(X509* cert) const { X509_free(cert); }
};
struct KeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
using Cert = std::unique_ptr<X509, X509Free>;
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;

Bio MemoryBio(const std::string& pem) {
  return Bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

absl::StatusOr<Cert> FirstCertificate(const std::string& flag, const std::string& path,
                                      const std::string& pem) {
  Bio bio = MemoryBio(pem);
  Cert cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (cert == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, "=", path, ": not a PEM certificate (", OpenSslReason(), ")"));
  }
  return cert;
}

absl::StatusOr<Key> PrivateKey(const std::string& path, const std::string& pem) {
  Bio bio = MemoryBio(pem);
  // No passphrase callback: an encrypted key cannot be used unattended, so it is refused.
  Key key(PEM_read_bio_PrivateKey(
      bio.get(), nullptr, [](char*, int, int, void*) { return 0; }, nullptr));
  if (key == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--tls-key=", path, ": not an unencrypted PEM private key (", OpenSslReason(), ")"));
  }
  return key;
}

}  // namespace

absl::StatusOr<std::optional<TlsFiles>> LoadTlsFiles(const TlsOptions& options) {
  if (!options.enabled()) return std::nullopt;
  TlsFiles files{options, "", "", ""};
  SLOTSERVE_ASSIGN_OR_RETURN(files.cert_pem, ReadFlagFile("--tls-cert", options.cert_path));
  SLOTSERVE_ASSIGN_OR_RETURN(files.key_pem, ReadFlagFile("--tls-key", options.key_path));
  SLOTSERVE_ASSIGN_OR_RETURN(Cert cert,
                             FirstCertificate("--tls-cert", options.cert_path, files.cert_pem));
  SLOTSERVE_ASSIGN_OR_RETURN(Key key, PrivateKey(options.key_path, files.key_pem));
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(absl::StrCat("--tls-key=", options.key_path,
                                                   ": this private key does not belong to the "
                                                   "certificate of --tls-cert=",
                                                   options.cert_path));
  }
  if (!options.client_ca_path.empty()) {
    SLOTSERVE_ASSIGN_OR_RETURN(files.client_ca_pem,
                               ReadFlagFile("--tls-client-ca", options.client_ca_path));
    SLOTSERVE_RETURN_IF_ERROR(
        FirstCertificate("--tls-client-ca", options.client_ca_path, files.client_ca_pem).status());
  }
  return files;
}

}  // namespace slotserve::server
