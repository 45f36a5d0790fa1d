// --use-service-account-credentials (upstream controller-manager's DynamicControllerClientBuilder):
// each controller talks to the API server as its own service account, kube-system/<name>, with a
// token from the TokenRequest API. ServiceAccountTokenSource gets or creates the service account,
// requests a token (3600 s) with the controller manager's own credentials, and serves it until
// 20 % of its lifetime is left (upstream's tokenSourceImpl and its cached token source); a 401 on
// a controller's request invalidates it. Thread-safe.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "pkg/client/rest_client.h"
#include "pkg/client/token_source.h"
#include "pkg/util/clock.h"
#include "pkg/util/result.h"

namespace kcm::app {

inline constexpr const char* kServiceAccountNamespace = "kube-system";

// getOrCreateServiceAccount: GET namespaces/<ns>/serviceaccounts/<name>; on NotFound, create it
// (AlreadyExists from a racing creator is success). Errors: any other API or transport error.
Status GetOrCreateServiceAccount(client::RestClient& root, const std::string& ns,
                                 const std::string& name);

class ServiceAccountTokenSource final : public client::TokenSource {
 public:
  struct Options {
    std::chrono::seconds expiration{3600};  // TokenRequest spec.expirationSeconds
    int leeway_percent = 20;                // refresh when this much of the lifetime is left
    // A token whose remaining lifetime looks shorter than this (clock skew) is taken to live
    // this long, as upstream does.
    std::chrono::seconds min_lifetime{600};
    // Attempts and the first wait between them (doubling), as upstream's wait.Backoff.
    int attempts = 4;
    std::chrono::milliseconds first_retry_wait{500};
  };

  // `root` carries the controller manager's own credentials; `clock` paces the cache and the
  // retries, and its wall time is what the token's expirationTimestamp is read against.
  ServiceAccountTokenSource(std::shared_ptr<client::RestClient> root, std::string ns,
                            std::string name, Clock& clock, Options options);

  // The cached token, or a new one from TokenRequest. Errors: the last attempt's error, naming
  // the service account.
  Result<std::string> Token() override;
  void Invalidate() override;
  bool Refreshable() const override { return true; }

 private:
  Result<std::string> Request(std::chrono::system_clock::time_point* expires_at);

  const std::shared_ptr<client::RestClient> root_;
  const std::string ns_;
  const std::string name_;
  Clock& clock_;
  const Options options_;
  std::mutex mu_;
  std::string token_;
  Clock::time_point refresh_at_{};
};

}  // namespace kcm::app
