#include "tests/integration/test_certificates.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/integration/test_client.h"

namespace slotserve::testing {
namespace {

// Runs openssl with `args`; false (with its output in *error) on failure.
bool OpenSsl(const std::vector<std::string>& args, std::string* error) {
  std::vector<std::string> argv = {"/usr/bin/openssl"};
  argv.insert(argv.end(), args.begin(), args.end());
  const CommandResult result = RunCommand(argv);
  if (result.exit_status == 0) return true;
  *error = absl::StrCat("openssl ", args[0], " failed (exit ", result.exit_status,
                        "): ", result.err, result.out);
  return false;
}

TestCertificates Make() {
  TestCertificates certs;
  char dir[] = "/tmp/slotserve-tls-XXXXXX";
  if (mkdtemp(dir) == nullptr) {
    certs.error = "mkdtemp failed";
    return certs;
  }
  certs.dir = dir;
  const auto in_dir = [&](const char* name) { return absl::StrCat(certs.dir, "/", name); };
  certs.ca = in_dir("ca.pem");
  certs.server_cert = in_dir("server.pem");
  certs.server_key = in_dir("server.key");
  certs.client_cert = in_dir("client.pem");
  certs.client_key = in_dir("client.key");
  certs.other_ca = in_dir("other-ca.pem");
  const std::string ca_key = in_dir("ca.key");
  const std::string san = in_dir("san.ext");
  std::ofstream(san) << "subjectAltName=IP:127.0.0.1,DNS:localhost\n";
  const auto self_signed = [&](const std::string& cert, const std::string& key, const char* name) {
    return OpenSsl({"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                    absl::StrCat("/CN=", name), "-keyout", key, "-out", cert},
                   &certs.error);
  };
  const auto signed_by_ca = [&](const std::string& cert, const std::string& key, const char* name,
                                bool server) {
    const std::string csr = cert + ".csr";
    if (!OpenSsl({"req", "-newkey", "rsa:2048", "-nodes", "-subj", absl::StrCat("/CN=", name),
                  "-keyout", key, "-out", csr},
                 &certs.error)) {
      return false;
    }
    std::vector<std::string> sign = {
        "x509",  "-req", "-in",  csr, "-CA", certs.ca, "-CAkey", ca_key, "-CAcreateserial",
        "-days", "2",    "-out", cert};
    if (server) sign.insert(sign.end(), {"-extfile", san});
    return OpenSsl(sign, &certs.error);
  };
  if (self_signed(certs.ca, ca_key, "slotserve test CA") &&
      self_signed(certs.other_ca, in_dir("other-ca.key"), "unrelated CA") &&
      signed_by_ca(certs.server_cert, certs.server_key, "localhost", true)) {
    signed_by_ca(certs.client_cert, certs.client_key, "slotserve test client", false);
  }
  return certs;
}

}  // namespace

const TestCertificates& Certificates() {
  static const TestCertificates* const certs = [] {
    auto* made = new TestCertificates(Make());
    if (!made->dir.empty()) {
      static const std::string dir = made->dir;
      atexit([] { std::filesystem::remove_all(dir); });
    }
    return made;
  }();
  return *certs;
}

std::string ReadText(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return std::move(text).str();
}

}  // namespace slotserve::testing
