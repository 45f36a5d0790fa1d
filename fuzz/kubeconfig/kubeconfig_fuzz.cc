// libFuzzer target for kubeconfig loading (ParseKubeconfig, RestConfigFromKubeconfig). The input
// is a kubeconfig's text. Checked: it parses or fails with reason InvalidKubeconfig (no exception
// escapes); a parsed config, written back as YAML (every string double-quoted, the *-data fields
// base64-encoded again), parses to the same config; resolving its current context gives a
// RestConfig with a server, or an InvalidKubeconfig error.
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>

#include "fuzz/check.h"
#include "pkg/client/kubeconfig.h"

namespace {

using kcm::client::Kubeconfig;

using kcm::fuzz::Check;

std::string Base64(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    const uint32_t v = (uint32_t{static_cast<uint8_t>(in[i])} << 16) |
                       (uint32_t{static_cast<uint8_t>(in[i + 1])} << 8) |
                       static_cast<uint8_t>(in[i + 2]);
    for (int shift : {18, 12, 6, 0}) out.push_back(kAlphabet[(v >> shift) & 63]);
  }
  if (i < in.size()) {
    uint32_t v = uint32_t{static_cast<uint8_t>(in[i])} << 16;
    if (i + 1 < in.size()) v |= uint32_t{static_cast<uint8_t>(in[i + 1])} << 8;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(i + 1 < in.size() ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

void Field(YAML::Emitter& out, const char* key, const std::string& value) {
  if (value.empty()) return;
  out << YAML::Key << key << YAML::Value << YAML::DoubleQuoted << value;
}

// The config as a kubeconfig file.
std::string Write(const Kubeconfig& c) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "clusters" << YAML::Value << YAML::BeginSeq;
  for (const auto& [name, cl] : c.clusters) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << YAML::DoubleQuoted << name;
    out << YAML::Key << "cluster" << YAML::Value << YAML::BeginMap;
    Field(out, "server", cl.server);
    Field(out, "certificate-authority", cl.certificate_authority);
    Field(out, "certificate-authority-data", Base64(cl.certificate_authority_data));
    Field(out, "tls-server-name", cl.tls_server_name);
    if (cl.insecure_skip_tls_verify) Field(out, "insecure-skip-tls-verify", "true");
    if (cl.disable_compression) Field(out, "disable-compression", "true");
    out << YAML::EndMap << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::Key << "users" << YAML::Value << YAML::BeginSeq;
  for (const auto& [name, u] : c.users) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << YAML::DoubleQuoted << name;
    out << YAML::Key << "user" << YAML::Value << YAML::BeginMap;
    Field(out, "client-certificate", u.client_certificate);
    Field(out, "client-certificate-data", Base64(u.client_certificate_data));
    Field(out, "client-key", u.client_key);
    Field(out, "client-key-data", Base64(u.client_key_data));
    Field(out, "token", u.token);
    Field(out, "tokenFile", u.token_file);
    out << YAML::EndMap << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::Key << "contexts" << YAML::Value << YAML::BeginSeq;
  for (const auto& [name, cx] : c.contexts) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << YAML::DoubleQuoted << name;
    out << YAML::Key << "context" << YAML::Value << YAML::BeginMap;
    Field(out, "cluster", cx.cluster);
    Field(out, "user", cx.user);
    Field(out, "namespace", cx.ns);
    out << YAML::EndMap << YAML::EndMap;
  }
  out << YAML::EndSeq;
  Field(out, "current-context", c.current_context);
  out << YAML::EndMap;
  Check(out.good());
  return out.c_str();
}

bool Same(const Kubeconfig& a, const Kubeconfig& b) {
  auto cluster = [](const kcm::client::KubeconfigCluster& c) {
    return std::tie(c.server, c.certificate_authority, c.certificate_authority_data,
                    c.insecure_skip_tls_verify, c.tls_server_name, c.disable_compression);
  };
  auto user = [](const kcm::client::KubeconfigAuthInfo& u) {
    return std::tie(u.client_certificate, u.client_certificate_data, u.client_key,
                    u.client_key_data, u.token, u.token_file);
  };
  auto context = [](const kcm::client::KubeconfigContext& c) {
    return std::tie(c.cluster, c.user, c.ns);
  };
  auto same_map = [](const auto& x, const auto& y, auto key) {
    if (x.size() != y.size()) return false;
    for (auto i = x.begin(), j = y.begin(); i != x.end(); ++i, ++j) {
      if (i->first != j->first || key(i->second) != key(j->second)) return false;
    }
    return true;
  };
  return same_map(a.clusters, b.clusters, cluster) && same_map(a.users, b.users, user) &&
         same_map(a.contexts, b.contexts, context) && a.current_context == b.current_context &&
         a.files == b.files;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string file = "/etc/kubernetes/fuzz.conf";
  auto config = kcm::client::ParseKubeconfig(
      std::string_view(reinterpret_cast<const char*>(data), size), file);
  if (!config.ok()) {
    Check(config.error().reason == "InvalidKubeconfig");
    return 0;
  }
  const std::string written = Write(*config);
  auto again = kcm::client::ParseKubeconfig(written, file);
  Check(again.ok());
  Check(Same(*config, *again));
  for (const std::string& context : {std::string(), std::string("kind-kind")}) {
    auto rest = kcm::client::RestConfigFromKubeconfig(*config, {"", context});
    if (rest.ok()) {
      Check(!rest->host.empty());
    } else {
      Check(rest.error().reason == "InvalidKubeconfig");
    }
  }
  return 0;
}
