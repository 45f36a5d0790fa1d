// Makes a self-signed serving certificate (EC P-256) for when no --tls-cert-file is given, as
// upstream does. Thread-safe (no shared state).
#pragma once

#include <string>
#include <vector>

#include "pkg/util/result.h"

namespace kcm::server {

struct PemPair {
  std::string certificate;
  std::string private_key;
};

// A certificate valid for a year for `host` (CN and DNS SAN) plus the given IP SANs.
Result<PemPair> MakeSelfSignedCertificate(const std::string& host,
                                          const std::vector<std::string>& ip_addresses);

}  // namespace kcm::server
