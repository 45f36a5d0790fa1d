#include "pkg/server/tls_context.h"

#include <openssl/err.h>
#include <openssl/pem.h>

#include "pkg/server/self_signed_cert.h"
#include "pkg/server/tls_options.h"

namespace kcm::server::internal {
namespace {

Error ServingError(const std::string& message) {
  return Error::Local("InvalidServing", message);
}

Result<std::string> ReadFile(const std::string& path) {
  util::BioPtr bio(BIO_new_file(path.c_str(), "r"));
  if (!bio) {
    ERR_clear_error();
    return ServingError("cannot read " + path);
  }
  std::string out;
  char buf[4096];
  int n;
  while ((n = BIO_read(bio.get(), buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

// Every entry of a name's field `nid` (CN, O), as UTF-8.
std::vector<std::string> NameEntries(X509_NAME* name, int nid) {
  std::vector<std::string> out;
  for (int i = X509_NAME_get_index_by_NID(name, nid, -1); i >= 0;
       i = X509_NAME_get_index_by_NID(name, nid, i)) {
    ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i));
    unsigned char* utf8 = nullptr;
    int len = ASN1_STRING_to_UTF8(&utf8, data);
    if (len >= 0) {
      out.emplace_back(reinterpret_cast<char*>(utf8), static_cast<size_t>(len));
      OPENSSL_free(utf8);
    }
  }
  return out;
}

// Accepts any client certificate during the handshake: which CA it must chain to depends on the
// authenticator (client CA or request-header CA), checked after the handshake.
int AcceptAnyClientCertificate(X509_STORE_CTX* /*ctx*/, void* /*arg*/) {
  return 1;
}

}  // namespace

Status ConfigureServerContext(SSL_CTX* ctx, const ServingOptions& o,
                              const std::vector<X509_STORE*>& client_cas) {
  std::string cert_pem, key_pem;
  if (!o.tls_cert_file.empty()) {
    auto cert = ReadFile(o.tls_cert_file);
    if (!cert.ok()) return cert.error();
    auto key = ReadFile(o.tls_private_key_file);
    if (!key.ok()) return key.error();
    cert_pem = std::move(*cert);
    key_pem = std::move(*key);
  } else {
    auto pair = MakeSelfSignedCertificate("localhost", {"127.0.0.1"});
    if (!pair.ok()) return pair.error();
    cert_pem = std::move(pair->certificate);
    key_pem = std::move(pair->private_key);
  }

  auto version = TLSVersionFromName(o.tls_min_version);
  if (!version.ok()) return version.error();
  auto ciphers = OpenSSLCipherList(o.tls_cipher_suites);
  if (!ciphers.ok()) return ciphers.error();
  int min_version = *version;
  // No TLS 1.2 suite named (only TLS 1.3 ones): TLS 1.2 cannot be negotiated, as in Go.
  if (ciphers->tls12.empty()) min_version = TLS1_3_VERSION;
  SSL_CTX_set_min_proto_version(ctx, min_version);
  if (min_version < TLS1_3_VERSION && SSL_CTX_set_cipher_list(ctx, ciphers->tls12.c_str()) != 1) {
    ERR_clear_error();
    return ServingError("none of the --tls-cipher-suites is available in this OpenSSL build");
  }
  // Server preference, no TLS compression, no renegotiation (a client-driven CPU sink).
  SSL_CTX_set_options(
      ctx, SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);

  util::BioPtr cert_bio(BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size())));
  util::X509Ptr cert(PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr));
  util::BioPtr key_bio(BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())));
  util::PkeyPtr key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
  if (!cert || SSL_CTX_use_certificate(ctx, cert.get()) != 1) {
    ERR_clear_error();
    return ServingError("bad serving certificate " + o.tls_cert_file);
  }
  // Intermediate certificates after the leaf in the same file form the chain.
  while (X509* extra = PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr)) {
    SSL_CTX_add_extra_chain_cert(ctx, extra);
  }
  ERR_clear_error();
  if (!key || SSL_CTX_use_PrivateKey(ctx, key.get()) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
    ERR_clear_error();
    return ServingError("bad serving key " + o.tls_private_key_file +
                        " (or it does not match the certificate)");
  }

  if (!client_cas.empty()) {
    // The CertificateRequest names the acceptable CAs, so clients pick the right certificate.
    for (X509_STORE* store : client_cas) {
      STACK_OF(X509_OBJECT)* objects = X509_STORE_get0_objects(store);
      for (int i = 0; i < sk_X509_OBJECT_num(objects); ++i) {
        if (X509* ca = X509_OBJECT_get0_X509(sk_X509_OBJECT_value(objects, i))) {
          SSL_CTX_add_client_CA(ctx, ca);
        }
      }
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    SSL_CTX_set_cert_verify_callback(ctx, AcceptAnyClientCertificate, nullptr);
  }
  ERR_clear_error();
  return OkStatus();
}

Result<util::X509StorePtr> LoadCABundle(const std::string& file, const std::string& flag) {
  auto pem = ReadFile(file);
  if (!pem.ok()) return ServingError(flag + ": " + pem.error().message);
  util::X509StorePtr store(X509_STORE_new());
  util::BioPtr bio(BIO_new_mem_buf(pem->data(), static_cast<int>(pem->size())));
  int count = 0;
  while (X509* raw = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    util::X509Ptr ca(raw);
    if (X509_STORE_add_cert(store.get(), ca.get()) == 1) ++count;
  }
  ERR_clear_error();
  if (count == 0) return ServingError(flag + ": no PEM certificate in " + file);
  return store;
}

ClientCertificate VerifyClientCertificate(SSL* ssl, X509_STORE* store) {
  ClientCertificate out;
  X509* leaf = SSL_get0_peer_certificate(ssl);
  if (leaf == nullptr || store == nullptr) return out;
  // On the server side the sent chain excludes the leaf.
  STACK_OF(X509)* intermediates = SSL_get_peer_cert_chain(ssl);
  util::X509StoreCtxPtr ctx(X509_STORE_CTX_new());
  if (ctx && X509_STORE_CTX_init(ctx.get(), store, leaf, intermediates) == 1 &&
      X509_STORE_CTX_set_purpose(ctx.get(), X509_PURPOSE_SSL_CLIENT) == 1) {
    out.verified = X509_verify_cert(ctx.get()) == 1;
  }
  ERR_clear_error();
  if (out.verified) {
    X509_NAME* subject = X509_get_subject_name(leaf);
    auto cn = NameEntries(subject, NID_commonName);
    if (!cn.empty()) out.common_name = cn.front();
    out.organizations = NameEntries(subject, NID_organizationName);
  }
  return out;
}

}  // namespace kcm::server::internal
