// Upstream's secure-serving TLS flag values (k8s.io/component-base/cli/flag: TLSCipherSuites,
// TLSVersion) translated to OpenSSL's spellings. Pure functions, no OpenSSL headers, so the flag
// validation in cmd/ can use them without linking the server. Thread-safe.
#pragma once

#include <string>
#include <vector>

#include "pkg/util/result.h"

namespace kcm::server {

// --tls-min-version values this build accepts: "VersionTLS12" (the default) and "VersionTLS13".
// Returns OpenSSL's protocol version number (TLS1_2_VERSION / TLS1_3_VERSION).
Result<int> TLSVersionFromName(const std::string& name);

struct OpenSSLCiphers {
  std::string tls12;       // SSL_CTX_set_cipher_list syntax, ':'-separated; "" = no TLS 1.2 suite
  bool has_tls13 = false;  // the list named TLS 1.3 suites (not configurable, as in Go)
};

// Maps IANA cipher suite names (as accepted by upstream's --tls-cipher-suites, secure and
// insecure ones) to OpenSSL names. An empty list gives the default: ECDHE key exchange with an
// AEAD (AES-GCM, ChaCha20-Poly1305) only — no CBC mode, no SHA-1 MAC, no static RSA.
Result<OpenSSLCiphers> OpenSSLCipherList(const std::vector<std::string>& iana_names);

}  // namespace kcm::server
