#include "cmd/kube-controller-manager/app/secure_serving.h"

#include "pkg/client/kubeconfig.h"
#include "pkg/client/rest_client.h"
#include "pkg/server/delegating_authorizer.h"

namespace kcm::app {
namespace {

// A client of its own for the delegated reviews, so they neither wait behind nor eat the
// controllers' rate limit. As upstream's DelegatingAuthenticationOptions.getClient: QPS 200,
// burst 400, a 10 s timeout; the given kubeconfig, else the controller manager's connection.
Result<std::shared_ptr<client::RestClient>> DelegatedClient(const client::RestConfig& own,
                                                            const std::string& kubeconfig,
                                                            const char* flag) {
  client::RestConfig c = own;
  if (!kubeconfig.empty()) {
    auto loaded = client::BuildConfigFromFlags("", kubeconfig);
    if (!loaded.ok()) {
      return Error::Local("InvalidFlag", std::string("--") + flag + ": " + loaded.error().message);
    }
    c = std::move(*loaded);
  }
  c.qps = 200;
  c.burst = 400;
  c.timeout = std::chrono::seconds(10);
  c.user_agent = own.user_agent;
  return client::RestClient::Create(c);
}

}  // namespace

Result<std::unique_ptr<server::SecureServer>> NewSecureServer(const Options& options,
                                                              const client::RestConfig& config) {
  auto authn =
      DelegatedClient(config, options.authentication_kubeconfig, "authentication-kubeconfig");
  if (!authn.ok()) return authn.error();
  auto authz =
      DelegatedClient(config, options.authorization_kubeconfig, "authorization-kubeconfig");
  if (!authz.ok()) return authz.error();
  server::ServingOptions so;
  so.bind_address = options.bind_address;
  so.port = options.secure_port;
  so.tls_cert_file = options.tls_cert_file;
  so.tls_private_key_file = options.tls_private_key_file;
  so.tls_min_version = options.tls_min_version;
  so.tls_cipher_suites = options.tls_cipher_suites;
  so.always_allow_paths = options.authorization_always_allow_paths;
  so.client_ca_file = options.client_ca_file;
  so.request_header = {options.requestheader_client_ca_file, options.requestheader_allowed_names,
                       options.requestheader_username_headers, options.requestheader_group_headers,
                       options.requestheader_extra_headers_prefix};
  auto server = std::make_unique<server::SecureServer>(so);
  server->AddHealthCheck({"ping", [] { return OkStatus(); }});
  server->SetAuthorizer(std::make_shared<server::DelegatingAuthorizer>(*authn, *authz));
  return server;
}

}  // namespace kcm::app
