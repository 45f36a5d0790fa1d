// Owning pointers for the OpenSSL objects pkg/server uses (FnDeleter calls a C free function).
// Internal to pkg/server's .cc files (it pulls in OpenSSL headers; never include it from a public
// header).
#pragma once

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

namespace kcm::server::internal {

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

}  // namespace kcm::server::internal
