// Certificates for the TLS tests, made at run time by the openssl command line into a fresh
// temporary directory: a CA, a server certificate for 127.0.0.1 and localhost signed by it,
// a client certificate signed by it, and a second CA that signed nothing the server trusts.
#pragma once

#include <string>

namespace slotserve::testing {

struct TestCertificates {
  std::string dir;
  std::string ca;           // ca.pem
  std::string server_cert;  // server.pem (SAN IP:127.0.0.1, DNS:localhost)
  std::string server_key;   // server.key
  std::string client_cert;  // client.pem, signed by ca
  std::string client_key;   // client.key
  std::string other_ca;     // other-ca.pem: trusts nothing here
  std::string error;        // set when openssl failed (then the paths are unusable)
};

// Made once per process (key generation is the slow part) and removed at exit.
const TestCertificates& Certificates();

// The whole file as a string ("" when unreadable).
std::string ReadText(const std::string& path);

}  // namespace slotserve::testing
