// The serving side's OpenSSL setup (certificate, protocol floor, cipher suites, client
// certificate request) and the post-handshake verification of a client certificate against a
// CA bundle. Internal to pkg/server's .cc files (OpenSSL headers). Thread-safe: the stores are
// read-only after LoadCABundle.
#pragma once

#include <string>
#include <vector>

#include "pkg/server/secure_server.h"
#include "pkg/util/openssl_ptr.h"

namespace kcm::server::internal {

// Configures a server SSL_CTX from the options: serving certificate and key (from the files, or a
// self-signed in-memory pair), minimum version, cipher suites, and — when `client_cas` is not
// empty — a request (not a requirement) for a client certificate naming those CAs. The handshake
// accepts any client certificate; VerifyClientCertificate decides per authenticator, as upstream
// (tls.RequestClientCert) does.
Status ConfigureServerContext(SSL_CTX* ctx, const ServingOptions& options,
                              const std::vector<X509_STORE*>& client_cas);

// Reads a PEM CA bundle; `flag` names it in errors.
Result<util::X509StorePtr> LoadCABundle(const std::string& file, const std::string& flag);

struct ClientCertificate {
  bool verified = false;  // the chain verifies to the store, for client authentication
  std::string common_name;
  std::vector<std::string> organizations;
};

// Verifies the peer's certificate (and the intermediates it sent) against `store`.
ClientCertificate VerifyClientCertificate(SSL* ssl, X509_STORE* store);

}  // namespace kcm::server::internal
