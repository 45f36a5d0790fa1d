// Kubeconfig loading (clientcmd): find the files per the loading rules, merge them, pick a
// context and turn it into a RestConfig; fall back to in-cluster config (behaviour 1.1, 1.2).
// Free functions over plain data; thread-safe (they touch no shared state).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/client/rest_config.h"
#include "pkg/util/result.h"

namespace kcm::client {

// One named entry of each kubeconfig section. Paths are already absolute (resolved against the
// directory of the file that held them); *_data fields are base64-decoded PEM.
struct KubeconfigCluster {
  std::string server;
  std::string certificate_authority;
  std::string certificate_authority_data;
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;
  bool disable_compression = false;  // clientcmd's Cluster.DisableCompression
};
struct KubeconfigAuthInfo {
  std::string client_certificate;
  std::string client_certificate_data;
  std::string client_key;
  std::string client_key_data;
  std::string token;
  std::string token_file;
};
struct KubeconfigContext {
  std::string cluster;
  std::string user;
  std::string ns;  // "namespace"
};

// A parsed (possibly merged) kubeconfig.
struct Kubeconfig {
  std::map<std::string, KubeconfigCluster> clusters;
  std::map<std::string, KubeconfigAuthInfo> users;
  std::map<std::string, KubeconfigContext> contexts;
  std::string current_context;
  std::vector<std::string> files;  // the files that contributed, in precedence order
};

// Where to look (clientcmd.ClientConfigLoadingRules).
struct KubeconfigLoadingRules {
  std::string explicit_path;            // --kubeconfig: only this file, missing = error
  std::vector<std::string> precedence;  // $KUBECONFIG entries, else {~/.kube/config}

  // Fills precedence from $KUBECONFIG (':'-separated, empty entries dropped) or $HOME.
  static KubeconfigLoadingRules FromEnvironment(std::string explicit_path = "");
};

struct ConfigOverrides {
  std::string master;   // --master: replaces the cluster's server
  std::string context;  // use this context instead of current-context
};

// Parses one kubeconfig file. Errors name the file and the field.
Result<Kubeconfig> LoadKubeconfigFile(const std::string& path);
// Parses the text of a kubeconfig read from `file` (an absolute path: relative paths in the text
// resolve against its directory, and errors name it). What LoadKubeconfigFile does once the file
// is read.
Result<Kubeconfig> ParseKubeconfig(std::string_view yaml, const std::string& file);

// Applies the loading rules: the explicit file only, or the precedence list with duplicates
// removed and missing files ignored; the first file to set a value or a map key wins, and named
// entries are taken whole. No file found yields an empty Kubeconfig (files empty).
Result<Kubeconfig> LoadKubeconfig(const KubeconfigLoadingRules& rules);

// Resolves the context (override, else current-context) to a RestConfig.
Result<RestConfig> RestConfigFromKubeconfig(const Kubeconfig& config,
                                            const ConfigOverrides& overrides = {});

// The daemon's entry point (clientcmd.BuildConfigFromFlags, extended with the $KUBECONFIG
// chain): with no kubeconfig found and no master, use in-cluster config.
Result<RestConfig> BuildConfigFromFlags(const std::string& master, const std::string& kubeconfig,
                                        const std::string& context = "");

}  // namespace kcm::client
