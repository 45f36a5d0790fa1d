// What the benchmark programs that talk to a real API server share: an unthrottled client from a
// kubeconfig and their namespace (and, through flag.h, their `--name=value` arguments).
// Header-only; each program is one .cc file.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "bench/lib/flag.h"
#include "pkg/client/api_errors.h"
#include "pkg/client/kubeconfig.h"
#include "pkg/client/resource_client.h"
#include "pkg/client/rest_client.h"

namespace kcm::bench {

// A client for the kubeconfig's cluster with the QPS limit lifted (a benchmark measures the
// client or the server, not the rate limiter); content_type as --kube-api-content-type, "" =
// the default; tweak (if set) changes the config last. Exits the program on an error.
inline std::shared_ptr<client::RestClient> UnthrottledClient(
    const std::string& kubeconfig, const std::string& content_type = "",
    const std::function<void(client::RestConfig&)>& tweak = {}) {
  auto config = client::BuildConfigFromFlags("", kubeconfig);
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", config.error().ToString().c_str());
    std::exit(1);
  }
  config->qps = -1;
  if (!content_type.empty()) config->content_type = content_type;
  if (tweak) tweak(*config);
  auto rest = client::RestClient::Create(*config);
  if (!rest.ok()) {
    std::fprintf(stderr, "%s\n", rest.error().ToString().c_str());
    std::exit(1);
  }
  return *rest;
}

// Creates the namespace unless it exists. Exits the program on another error.
inline void EnsureNamespace(const std::shared_ptr<client::RestClient>& rest,
                            const std::string& ns) {
  client::ResourceClient namespaces(rest, {"", "v1", "namespaces"}, false);
  auto created = namespaces.Create(
      "", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" + ns + R"("}})");
  if (!created.ok() && !errors::IsAlreadyExists(created.error())) {
    std::fprintf(stderr, "namespace %s: %s\n", ns.c_str(), created.error().ToString().c_str());
    std::exit(1);
  }
}

}  // namespace kcm::bench
