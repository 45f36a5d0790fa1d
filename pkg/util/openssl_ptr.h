// Owning pointers for OpenSSL objects (FnDeleter calls a C free function), one set for the
// client transport (pkg/client) and the serving side (pkg/server). Include it only from .cc files
// and internal headers: it pulls in OpenSSL's headers (never from a public header).
#pragma once

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

namespace kcm::util {

template <auto fn>
struct FnDeleter {
  template <typename T>
  void operator()(T* p) const {
    fn(p);
  }
};

using SslCtxPtr = std::unique_ptr<SSL_CTX, FnDeleter<SSL_CTX_free>>;
using SslPtr = std::unique_ptr<SSL, FnDeleter<SSL_free>>;
using BioPtr = std::unique_ptr<BIO, FnDeleter<BIO_free>>;
using X509Ptr = std::unique_ptr<X509, FnDeleter<X509_free>>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, FnDeleter<EVP_PKEY_free>>;
using X509ExtPtr = std::unique_ptr<X509_EXTENSION, FnDeleter<X509_EXTENSION_free>>;
using X509StorePtr = std::unique_ptr<X509_STORE, FnDeleter<X509_STORE_free>>;
using X509StoreCtxPtr = std::unique_ptr<X509_STORE_CTX, FnDeleter<X509_STORE_CTX_free>>;
using SslSessionPtr = std::unique_ptr<SSL_SESSION, FnDeleter<SSL_SESSION_free>>;

}  // namespace kcm::util
