// TLS on gRPC and on the HTTP API (--tls-cert, --tls-key, --tls-client-ca) with certificates
// made by openssl at run time: the C++ stub, slotserve-cli and curl get through with the CA;
// a plaintext client, a client trusting another CA, and (mutual TLS) a client without a
// CA-signed certificate are refused; bad files stop the server at start-up naming the flag.
#include <gtest/gtest.h>
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/integration/server_test.h"
#include "tests/integration/test_certificates.h"

namespace slotserve::testing {
namespace {

struct ClientTls {
  std::string ca;
  std::string cert;
  std::string key;
};

std::shared_ptr<grpc::Channel> TlsChannel(const std::string& address, const ClientTls& tls) {
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = ReadText(tls.ca);
  if (!tls.cert.empty()) {
    options.pem_cert_chain = ReadText(tls.cert);
    options.pem_private_key = ReadText(tls.key);
  }
  grpc::ChannelArguments arguments;
  arguments.SetInt("grpc.use_local_subchannel_pool", 1);
  return grpc::CreateCustomChannel(address, grpc::SslCredentials(options), arguments);
}

// GetModelInfo's status through `channel` (5 s deadline).
grpc::Status InfoStatus(const std::shared_ptr<grpc::Channel>& channel) {
  auto stub = v1::SlotServe::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  v1::ModelInfo info;
  return stub->GetModelInfo(&context, v1::GetModelInfoRequest(), &info);
}

class TlsTest : public ServerTest {
 protected:
  void SetUp() override { ASSERT_TRUE(certs_.error.empty()) << certs_.error; }
  // Starts the server with TLS (mutual when `client_ca`); ServerTest's plaintext channel is
  // replaced by one that trusts the test CA.
  void StartTls(bool client_ca) {
    std::vector<std::string> flags = {"--tls-cert=" + certs_.server_cert,
                                      "--tls-key=" + certs_.server_key,
                                      "--http-listen=127.0.0.1:0"};
    if (client_ca) flags.push_back("--tls-client-ca=" + certs_.ca);
    std::string error;
    server_ = ServerProcess::Start(flags, &error);
    ASSERT_NE(server_, nullptr) << error;
    ASSERT_TRUE(absl::StrContains(server_->log(), client_ca ? "mutual TLS, " : "TLS, "))
        << server_->log();
  }
  CommandResult Cli(std::vector<std::string> flags) {
    std::vector<std::string> argv = {CliBinary(), "--server=" + server_->address(),
                                     "--timeout=10s"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    return RunCommand(argv);
  }
  CommandResult Curl(std::vector<std::string> flags, const std::string& path) {
    std::vector<std::string> argv = {"/usr/bin/curl", "-sS", "--max-time", "10"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.push_back(absl::StrCat("https://127.0.0.1:", server_->http_port(), path));
    return RunCommand(argv);
  }

  const TestCertificates& certs_ = Certificates();
};

TEST_F(TlsTest, GrpcStubAndCliGetThroughWithTheCa) {
  StartTls(/*client_ca=*/false);
  const auto channel = TlsChannel(server_->address(), {certs_.ca, "", ""});
  auto stub = v1::SlotServe::NewStub(channel);
  const StreamResult result = Generate(*stub, GreedyTextRequest("In the beginning", 5));
  ASSERT_TRUE(result.status.ok()) << result.status.error_message();
  EXPECT_EQ(result.ids.size(), 5u);

  const CommandResult cli = Cli(
      {"--tls-ca=" + certs_.ca, "complete", "--max-new-tokens=3", "--quiet", "In the beginning"});
  EXPECT_EQ(cli.exit_status, 0) << cli.err;
  // The name checked can be overridden (the certificate names localhost, not this one).
  const CommandResult renamed =
      Cli({"--tls-ca=" + certs_.ca, "--tls-server-name=example.org", "info"});
  EXPECT_EQ(renamed.exit_status, 1) << renamed.out;
  const CommandResult named = Cli({"--tls-ca=" + certs_.ca, "--tls-server-name=localhost", "info"});
  EXPECT_EQ(named.exit_status, 0) << named.err;
}

TEST_F(TlsTest, PlaintextClientsAndClientsTrustingAnotherCaAreRefused) {
  StartTls(/*client_ca=*/false);
  EXPECT_EQ(InfoStatus(server_->NewChannel()).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(InfoStatus(TlsChannel(server_->address(), {certs_.other_ca, "", ""})).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  const CommandResult plaintext_cli = Cli({"info"});
  EXPECT_EQ(plaintext_cli.exit_status, 1);
  EXPECT_TRUE(absl::StrContains(plaintext_cli.err, "--tls-ca")) << plaintext_cli.err;
}

TEST_F(TlsTest, HttpsWithCurl) {
  StartTls(/*client_ca=*/false);
  const CommandResult models = Curl({"--cacert", certs_.ca}, "/v1/models");
  ASSERT_EQ(models.exit_status, 0) << models.err;
  EXPECT_TRUE(absl::StrContains(models.out, "\"object\":\"list\"")) << models.out;
  // Not trusted: curl refuses the certificate (exit 60).
  EXPECT_NE(Curl({"--cacert", certs_.other_ca}, "/health").exit_status, 0);
  // Metrics stay plain HTTP on their own listener.
  EXPECT_TRUE(absl::StrContains(Scrape(), "slotserve_requests_total"));
}

TEST_F(TlsTest, MutualTlsNeedsACaSignedClientCertificate) {
  StartTls(/*client_ca=*/true);
  EXPECT_EQ(InfoStatus(TlsChannel(server_->address(), {certs_.ca, "", ""})).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  EXPECT_TRUE(
      InfoStatus(TlsChannel(server_->address(), {certs_.ca, certs_.client_cert, certs_.client_key}))
          .ok());
  // A client certificate the trusted CA did not sign (the unrelated CA's own) is refused too.
  EXPECT_EQ(InfoStatus(TlsChannel(server_->address(),
                                  {certs_.ca, certs_.other_ca, certs_.dir + "/other-ca.key"}))
                .error_code(),
            grpc::StatusCode::UNAVAILABLE);

  EXPECT_EQ(Cli({"--tls-ca=" + certs_.ca, "info"}).exit_status, 1);
  const CommandResult cli = Cli({"--tls-ca=" + certs_.ca, "--tls-cert=" + certs_.client_cert,
                                 "--tls-key=" + certs_.client_key, "info"});
  EXPECT_EQ(cli.exit_status, 0) << cli.err;

  EXPECT_NE(Curl({"--cacert", certs_.ca}, "/health").exit_status, 0);
  const CommandResult curl = Curl(
      {"--cacert", certs_.ca, "--cert", certs_.client_cert, "--key", certs_.client_key}, "/health");
  EXPECT_EQ(curl.exit_status, 0) << curl.err;
  EXPECT_TRUE(absl::StrContains(curl.out, "serving")) << curl.out;
}

TEST_F(TlsTest, BadFilesStopTheServerNamingFlagAndFile) {
  const struct {
    std::vector<std::string> flags;
    std::string expected;
  } cases[] = {
      {{"--tls-cert=" + certs_.server_cert, "--tls-key=" + certs_.client_key},
       "--tls-key=" + certs_.client_key + ": this private key does not belong"},
      {{"--tls-cert=/nonexistent/cert.pem", "--tls-key=" + certs_.server_key},
       "--tls-cert=/nonexistent/cert.pem: cannot read the file"},
      {{"--tls-cert=" + certs_.server_key, "--tls-key=" + certs_.server_key},
       "--tls-cert=" + certs_.server_key + ": not a PEM certificate"},
      {{"--tls-cert=" + certs_.server_cert, "--tls-key=" + certs_.server_cert},
       "--tls-key=" + certs_.server_cert + ": not an unencrypted PEM private key"},
      {{"--tls-cert=" + certs_.server_cert, "--tls-key=" + certs_.server_key,
        "--tls-client-ca=" + certs_.server_key},
       "--tls-client-ca=" + certs_.server_key + ": not a PEM certificate"},
      {{"--tls-cert=" + certs_.server_cert}, "--tls-cert and --tls-key must be given together"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> argv = {ServerBinary(), "--model=" + TinyModelDir(),
                                     "--listen=127.0.0.1:0", "--metrics-listen=127.0.0.1:0"};
    argv.insert(argv.end(), c.flags.begin(), c.flags.end());
    const CommandResult result = RunCommand(argv);
    EXPECT_NE(result.exit_status, 0) << c.expected;
    EXPECT_TRUE(absl::StrContains(result.err + result.out, c.expected))
        << "expected: " << c.expected << "\ngot: " << result.err << result.out;
  }
}

}  // namespace
}  // namespace slotserve::testing
