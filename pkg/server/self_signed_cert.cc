#include "pkg/server/self_signed_cert.h"

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

#include "pkg/util/openssl_ptr.h"

namespace kcm::server {
namespace {

Error SslError(const std::string& what) {
  return Error::Local("TLSError", "self-signed certificate: " + what + " failed");
}

std::string BioString(BIO* bio) {
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(len));
}

}  // namespace

Result<PemPair> MakeSelfSignedCertificate(const std::string& host,
                                          const std::vector<std::string>& ip_addresses) {
  util::PkeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return SslError("key generation");
  util::X509Ptr cert(X509_new());
  if (!cert) return SslError("X509_new");
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), static_cast<long>(time(nullptr)));
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 365L * 24 * 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  std::string cn = host + "@" + std::to_string(time(nullptr));
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  std::string san = "DNS:" + host;
  for (const auto& ip : ip_addresses) san += ",IP:" + ip;
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert.get(), cert.get(), nullptr, nullptr, 0);
  util::X509ExtPtr ext(X509V3_EXT_conf_nid(nullptr, &ctx, NID_subject_alt_name, san.c_str()));
  if (!ext || !X509_add_ext(cert.get(), ext.get(), -1)) return SslError("subjectAltName");
  if (!X509_sign(cert.get(), key.get(), EVP_sha256())) return SslError("signing");

  util::BioPtr cert_bio(BIO_new(BIO_s_mem()));
  util::BioPtr key_bio(BIO_new(BIO_s_mem()));
  if (!cert_bio || !key_bio || !PEM_write_bio_X509(cert_bio.get(), cert.get()) ||
      !PEM_write_bio_PrivateKey(key_bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr)) {
    return SslError("PEM encoding");
  }
  return PemPair{BioString(cert_bio.get()), BioString(key_bio.get())};
}

}  // namespace kcm::server
