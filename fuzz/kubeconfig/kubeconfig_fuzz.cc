// libFuzzer target for kubeconfig loading (ParseKubeconfig, RestConfigFromKubeconfig). The input
// is a kubeconfig's text. Checked: it parses or fails with reason InvalidKubeconfig (no exception
// escapes); a parsed config, written back as YAML (flow style, every string double-quoted with
// everything but printable ASCII escaped, the *-data fields base64-encoded again), parses to the
// same config; resolving its current context gives a RestConfig with a server, or an
// InvalidKubeconfig error.
#include <cstddef>
#include <cstdint>
#include <cstdio>
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

// `s` as a YAML double-quoted scalar, every character outside printable ASCII escaped by its
// code point (\xXX, \uXXXX, \UXXXXXXXX), so that nothing a YAML reader treats specially (NEL and
// the other line breaks it folds, noncharacters yaml-cpp's emitter would replace) is written as
// itself. A string that is not UTF-8 fails the check: the parser never makes one.
std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const int n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
    Check((c < 0x80 || (c & 0xC0) == 0xC0) && i + n <= s.size());
    uint32_t cp = n == 1 ? c : c & (0x7F >> n);
    for (int k = 1; k < n; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      Check((cc & 0xC0) == 0x80);
      cp = (cp << 6) | (cc & 0x3F);
    }
    i += n;
    char buf[16];
    if (cp == '"' || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp >= 0x20 && cp < 0x7F) {
      out += static_cast<char>(cp);
    } else {
      std::snprintf(buf, sizeof buf,
                    cp < 0x100     ? "\\x%02X"
                    : cp < 0x10000 ? "\\u%04X"
                                   : "\\U%08X",
                    static_cast<unsigned>(cp));
      out += buf;
    }
  }
  return out + "\"";
}

// `"key": value, ` for a non-empty value, into a flow mapping.
void Field(std::string& out, const char* key, const std::string& value) {
  if (value.empty()) return;
  out += std::string("\"") + key + "\": " + Quote(value) + ", ";
}

// A flow mapping from the fields Field wrote (a trailing ", " dropped).
std::string Map(std::string fields) {
  if (fields.size() >= 2) fields.resize(fields.size() - 2);
  return "{" + fields + "}";
}

// The config as a kubeconfig file (YAML in flow style: one line).
std::string Write(const Kubeconfig& c) {
  std::string clusters, users, contexts;
  for (const auto& [name, cl] : c.clusters) {
    std::string f;
    Field(f, "server", cl.server);
    Field(f, "certificate-authority", cl.certificate_authority);
    Field(f, "certificate-authority-data", Base64(cl.certificate_authority_data));
    Field(f, "tls-server-name", cl.tls_server_name);
    if (cl.insecure_skip_tls_verify) Field(f, "insecure-skip-tls-verify", "true");
    if (cl.disable_compression) Field(f, "disable-compression", "true");
    clusters += "{\"name\": " + Quote(name) + ", \"cluster\": " + Map(f) + "}, ";
  }
  for (const auto& [name, u] : c.users) {
    std::string f;
    Field(f, "client-certificate", u.client_certificate);
    Field(f, "client-certificate-data", Base64(u.client_certificate_data));
    Field(f, "client-key", u.client_key);
    Field(f, "client-key-data", Base64(u.client_key_data));
    Field(f, "token", u.token);
    Field(f, "tokenFile", u.token_file);
    users += "{\"name\": " + Quote(name) + ", \"user\": " + Map(f) + "}, ";
  }
  for (const auto& [name, cx] : c.contexts) {
    std::string f;
    Field(f, "cluster", cx.cluster);
    Field(f, "user", cx.user);
    Field(f, "namespace", cx.ns);
    contexts += "{\"name\": " + Quote(name) + ", \"context\": " + Map(f) + "}, ";
  }
  auto seq = [](std::string items) {
    if (items.size() >= 2) items.resize(items.size() - 2);
    return "[" + items + "]";
  };
  std::string top = "\"clusters\": " + seq(clusters) + ", \"users\": " + seq(users) +
                    ", \"contexts\": " + seq(contexts) + ", ";
  Field(top, "current-context", c.current_context);
  return Map(top) + "\n";
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
