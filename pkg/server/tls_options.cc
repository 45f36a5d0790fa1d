#include "pkg/server/tls_options.h"

#include <array>
#include <string_view>
#include <utility>

namespace kcm::server {
namespace {

// IANA name → OpenSSL name, for every TLS 1.0-1.2 suite upstream's TLSCipherSuites flag accepts.
constexpr std::array<std::pair<std::string_view, std::string_view>, 24> kTLS12Suites = {{
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", "ECDHE-ECDSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "ECDHE-RSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA-CHACHA20-POLY1305"},
    // Insecure ones upstream still accepts when named explicitly.
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA-AES128-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA-AES256-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA-AES128-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA-AES256-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "ECDHE-ECDSA-AES128-SHA256"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", "ECDHE-RSA-AES128-SHA256"},
    {"TLS_RSA_WITH_AES_128_CBC_SHA", "AES128-SHA"},
    {"TLS_RSA_WITH_AES_256_CBC_SHA", "AES256-SHA"},
    {"TLS_RSA_WITH_AES_128_CBC_SHA256", "AES128-SHA256"},
    {"TLS_RSA_WITH_AES_128_GCM_SHA256", "AES128-GCM-SHA256"},
    {"TLS_RSA_WITH_AES_256_GCM_SHA384", "AES256-GCM-SHA384"},
    {"TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", "ECDHE-RSA-DES-CBC3-SHA"},
    {"TLS_RSA_WITH_3DES_EDE_CBC_SHA", "DES-CBC3-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_RC4_128_SHA", "ECDHE-ECDSA-RC4-SHA"},
    {"TLS_ECDHE_RSA_WITH_RC4_128_SHA", "ECDHE-RSA-RC4-SHA"},
    {"TLS_RSA_WITH_RC4_128_SHA", "RC4-SHA"},
}};

// TLS 1.3 suites: accepted by the flag, but (as in Go's crypto/tls) not configurable.
constexpr std::array<std::string_view, 3> kTLS13Suites = {
    "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"};

constexpr std::string_view kDefaultTLS12 =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

}  // namespace

Result<int> TLSVersionFromName(const std::string& name) {
  if (name.empty() || name == "VersionTLS12") return 0x0303;  // TLS1_2_VERSION
  if (name == "VersionTLS13") return 0x0304;                  // TLS1_3_VERSION
  if (name == "VersionTLS10" || name == "VersionTLS11") {
    return Error::Local("InvalidServing",
                        name +
                            " is not supported (TLS 1.0 and 1.1 are off in this build); use "
                            "VersionTLS12 or VersionTLS13");
  }
  return Error::Local("InvalidServing",
                      "unknown TLS version \"" + name + "\"; use VersionTLS12 or VersionTLS13");
}

Result<OpenSSLCiphers> OpenSSLCipherList(const std::vector<std::string>& iana_names) {
  OpenSSLCiphers out;
  if (iana_names.empty()) {
    out.tls12 = std::string(kDefaultTLS12);
    return out;
  }
  for (const std::string& name : iana_names) {
    bool found = false;
    for (const auto& [iana, openssl] : kTLS12Suites) {
      if (iana == name) {
        if (!out.tls12.empty()) out.tls12 += ':';
        out.tls12 += openssl;
        found = true;
        break;
      }
    }
    for (std::string_view tls13 : kTLS13Suites) {
      if (tls13 == name) {
        out.has_tls13 = true;
        found = true;
      }
    }
    if (!found) {
      return Error::Local("InvalidServing", "unknown or unsupported cipher suite \"" + name + "\"");
    }
  }
  return out;
}

}  // namespace kcm::server
