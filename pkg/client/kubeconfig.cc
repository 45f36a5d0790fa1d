#include "pkg/client/kubeconfig.h"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "pkg/client/base64.h"
#include "pkg/client/in_cluster_config.h"

namespace kcm::client {
namespace {

namespace fs = std::filesystem;

Error ConfigError(const std::string& file, const std::string& field, const std::string& what) {
  std::string msg = "kubeconfig " + file;
  if (!field.empty()) msg += ": " + field;
  msg += ": " + what;
  return Error::Local("InvalidKubeconfig", std::move(msg));
}

// Decodes the RFC 3629 UTF-8 code point at s[*i] (no overlong forms, no surrogates, nothing past
// U+10FFFF) and advances *i past it; nullopt when the bytes there are not one.
std::optional<uint32_t> NextCodePoint(std::string_view s, size_t* i) {
  const auto c = static_cast<unsigned char>(s[*i]);
  size_t n = 0;
  uint32_t cp = 0, min = 0;
  if (c < 0x80) {
    ++*i;
    return c;
  } else if ((c & 0xE0) == 0xC0) {
    n = 1, cp = c & 0x1F, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    n = 2, cp = c & 0x0F, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    n = 3, cp = c & 0x07, min = 0x10000;
  } else {
    return std::nullopt;
  }
  if (s.size() - *i <= n) return std::nullopt;
  for (size_t k = 1; k <= n; ++k) {
    const auto cc = static_cast<unsigned char>(s[*i + k]);
    if ((cc & 0xC0) != 0x80) return std::nullopt;
    cp = (cp << 6) | (cc & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return std::nullopt;
  *i += n + 1;
  return cp;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// UTF-16 text (after its byte order mark) as UTF-8, so that one check (YamlTextProblem) and one
// decoder (yaml-cpp's UTF-8 reader) see every file; nullopt for an odd length or a surrogate
// without its pair. YAML streams may be UTF-16 (Windows tools write kubeconfigs so).
std::optional<std::string> Utf16ToUtf8(std::string_view s, bool big_endian) {
  if (s.size() % 2 != 0) return std::nullopt;
  auto unit = [&](size_t i) -> uint32_t {
    const auto a = static_cast<unsigned char>(s[i]), b = static_cast<unsigned char>(s[i + 1]);
    return big_endian ? (a << 8) | b : (b << 8) | a;
  };
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); i += 2) {
    uint32_t cp = unit(i);
    if (cp >= 0xDC00 && cp <= 0xDFFF) return std::nullopt;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (i + 4 > s.size()) return std::nullopt;
      const uint32_t low = unit(i + 2);
      if (low < 0xDC00 || low > 0xDFFF) return std::nullopt;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
      i += 2;
    }
    AppendUtf8(cp, &out);
  }
  return out;
}

// The characters YAML 1.1/1.2 allow in a stream (c-printable): tab, line breaks, the printable
// ASCII range, NEL and the BMP and astral planes without surrogates, U+FFFE and U+FFFF.
bool IsYamlPrintable(uint32_t cp) {
  return cp == 0x09 || cp == 0x0A || cp == 0x0D || (cp >= 0x20 && cp <= 0x7E) || cp == 0x85 ||
         (cp >= 0xA0 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) ||
         (cp >= 0x10000 && cp <= 0x10FFFF);
}

// Why UTF-8 text cannot be a YAML stream, or "" when it can. clientcmd's YAML reader refuses text
// that is not UTF-8 and control characters outside quoted escapes; yaml-cpp would pass them into
// the strings, a NUL even as a stray byte that is not UTF-8 (a token or a server address nobody
// can write back). Escapes in quoted strings are yaml-cpp's to check (it refuses a surrogate).
std::string YamlTextProblem(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t at = i;
    const auto cp = NextCodePoint(s, &i);
    if (!cp) return "not valid UTF-8 at byte " + std::to_string(at);
    if (!IsYamlPrintable(*cp)) {
      char hex[16];
      std::snprintf(hex, sizeof hex, "U+%04X", static_cast<unsigned>(*cp));
      return std::string("control character ") + hex + " at byte " + std::to_string(at);
    }
  }
  return "";
}

// Reads the scalar `key` of `node` into *out; absent keys leave *out alone.
Status ReadString(const YAML::Node& node, const char* key, const std::string& file,
                  const std::string& where, std::string* out) {
  const YAML::Node v = node[key];
  if (!v || v.IsNull()) return OkStatus();
  if (!v.IsScalar()) return ConfigError(file, where + "." + key, "must be a string");
  *out = v.Scalar();
  return OkStatus();
}

Status ReadData(const YAML::Node& node, const char* key, const std::string& file,
                const std::string& where, std::string* out) {
  std::string encoded;
  if (auto st = ReadString(node, key, file, where, &encoded); !st.ok()) return st;
  if (encoded.empty()) return OkStatus();
  auto decoded = Base64Decode(encoded);
  if (!decoded.ok()) return ConfigError(file, where + "." + key, "invalid base64 data");
  *out = std::move(decoded).value();
  return OkStatus();
}

// A boolean field: absent, true or false (YAML's other spellings are refused, as clientcmd's
// strict decoding refuses them).
Status ReadBool(const YAML::Node& node, const char* key, const std::string& file,
                const std::string& where, bool* out) {
  std::string text;
  if (auto st = ReadString(node, key, file, where, &text); !st.ok()) return st;
  if (text.empty()) return OkStatus();
  if (text != "true" && text != "false") {
    return ConfigError(file, where + "." + key, "must be true or false");
  }
  *out = text == "true";
  return OkStatus();
}

// Relative paths in a kubeconfig are relative to the file holding them.
Status ReadPath(const YAML::Node& node, const char* key, const std::string& file,
                const std::string& where, std::string* out) {
  if (auto st = ReadString(node, key, file, where, out); !st.ok()) return st;
  if (!out->empty() && fs::path(*out).is_relative()) {
    *out = (fs::path(file).parent_path() / *out).lexically_normal().string();
  }
  return OkStatus();
}

// Iterates a `- name: x\n  <field>: {...}` list. fn(name, body, where) per entry.
template <typename Fn>
Status ForEachNamed(const YAML::Node& root, const char* section, const char* field,
                    const std::string& file, Fn fn) {
  const YAML::Node list = root[section];
  if (!list || list.IsNull()) return OkStatus();
  if (!list.IsSequence()) return ConfigError(file, section, "must be a list");
  for (const auto& entry : list) {
    const YAML::Node name = entry["name"];
    if (!name || !name.IsScalar() || name.Scalar().empty()) {
      return ConfigError(file, section, "entry without a name");
    }
    const std::string where = std::string(section) + "[" + name.Scalar() + "]";
    const YAML::Node body = entry[field];
    if (body && !body.IsNull() && !body.IsMap()) {
      return ConfigError(file, where + "." + field, "must be a map");
    }
    if (auto st = fn(name.Scalar(), body ? body : YAML::Node(YAML::NodeType::Map), where);
        !st.ok()) {
      return st;
    }
  }
  return OkStatus();
}

Result<Kubeconfig> KubeconfigFromYaml(const YAML::Node& root, const std::string& file) {
  Kubeconfig out;
  out.files.push_back(file);
  if (!root || root.IsNull()) return out;  // an empty file is a valid, empty config
  if (!root.IsMap()) return ConfigError(file, "", "top level must be a map");

  auto st = ForEachNamed(
      root, "clusters", "cluster", file,
      [&](const std::string& name, const YAML::Node& n, const std::string& where) -> Status {
        KubeconfigCluster c;
        if (auto s = ReadString(n, "server", file, where, &c.server); !s) return s;
        if (auto s = ReadPath(n, "certificate-authority", file, where, &c.certificate_authority);
            !s) {
          return s;
        }
        if (auto s = ReadData(n, "certificate-authority-data", file, where,
                              &c.certificate_authority_data);
            !s) {
          return s;
        }
        if (auto s = ReadString(n, "tls-server-name", file, where, &c.tls_server_name); !s) {
          return s;
        }
        if (auto s =
                ReadBool(n, "insecure-skip-tls-verify", file, where, &c.insecure_skip_tls_verify);
            !s) {
          return s;
        }
        if (auto s = ReadBool(n, "disable-compression", file, where, &c.disable_compression); !s) {
          return s;
        }
        out.clusters.emplace(name, std::move(c));
        return OkStatus();
      });
  if (!st) return st.error();

  st = ForEachNamed(
      root, "users", "user", file,
      [&](const std::string& name, const YAML::Node& n, const std::string& where) -> Status {
        KubeconfigAuthInfo u;
        if (auto s = ReadPath(n, "client-certificate", file, where, &u.client_certificate); !s) {
          return s;
        }
        if (auto s =
                ReadData(n, "client-certificate-data", file, where, &u.client_certificate_data);
            !s) {
          return s;
        }
        if (auto s = ReadPath(n, "client-key", file, where, &u.client_key); !s) {
          return s;
        }
        if (auto s = ReadData(n, "client-key-data", file, where, &u.client_key_data); !s) {
          return s;
        }
        if (auto s = ReadString(n, "token", file, where, &u.token); !s) return s;
        if (auto s = ReadPath(n, "tokenFile", file, where, &u.token_file); !s) {
          return s;
        }
        out.users.emplace(name, std::move(u));
        return OkStatus();
      });
  if (!st) return st.error();

  st = ForEachNamed(
      root, "contexts", "context", file,
      [&](const std::string& name, const YAML::Node& n, const std::string& where) -> Status {
        KubeconfigContext c;
        if (auto s = ReadString(n, "cluster", file, where, &c.cluster); !s) return s;
        if (auto s = ReadString(n, "user", file, where, &c.user); !s) return s;
        if (auto s = ReadString(n, "namespace", file, where, &c.ns); !s) return s;
        out.contexts.emplace(name, std::move(c));
        return OkStatus();
      });
  if (!st) return st.error();

  if (auto s = ReadString(root, "current-context", file, "", &out.current_context); !s) {
    return s.error();
  }
  return out;
}

// Earlier files win: only keys (and values) not yet set are taken from `later`.
void MergeInto(Kubeconfig* merged, Kubeconfig later) {
  for (auto& [k, v] : later.clusters) merged->clusters.try_emplace(k, std::move(v));
  for (auto& [k, v] : later.users) merged->users.try_emplace(k, std::move(v));
  for (auto& [k, v] : later.contexts) merged->contexts.try_emplace(k, std::move(v));
  if (merged->current_context.empty()) merged->current_context = std::move(later.current_context);
  for (auto& f : later.files) merged->files.push_back(std::move(f));
}

}  // namespace

KubeconfigLoadingRules KubeconfigLoadingRules::FromEnvironment(std::string explicit_path) {
  KubeconfigLoadingRules rules;
  rules.explicit_path = std::move(explicit_path);
  const char* env = std::getenv("KUBECONFIG");
  if (env != nullptr && *env != '\0') {
    std::string_view list(env);
    while (!list.empty()) {
      const auto colon = list.find(':');
      std::string_view entry = list.substr(0, colon);
      if (!entry.empty()) rules.precedence.emplace_back(entry);
      if (colon == std::string_view::npos) break;
      list.remove_prefix(colon + 1);
    }
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    rules.precedence.push_back((fs::path(home) / ".kube" / "config").string());
  }
  return rules;
}

Result<Kubeconfig> ParseKubeconfig(std::string_view yaml, const std::string& file) {
  std::string utf8;
  if (yaml.substr(0, 2) == "\xFE\xFF" || yaml.substr(0, 2) == "\xFF\xFE") {
    auto decoded = Utf16ToUtf8(yaml.substr(2), yaml[0] == '\xFE');
    if (!decoded) return ConfigError(file, "", "invalid YAML: not valid UTF-16");
    utf8 = std::move(*decoded);
    yaml = utf8;
  }
  if (std::string problem = YamlTextProblem(yaml); !problem.empty()) {
    return ConfigError(file, "", "invalid YAML: " + problem);
  }
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return ConfigError(file, "", std::string("invalid YAML: ") + e.what());
  }
  try {
    return KubeconfigFromYaml(root, file);
  } catch (const YAML::Exception& e) {
    return ConfigError(file, "", std::string("unexpected structure: ") + e.what());
  }
}

Result<Kubeconfig> LoadKubeconfigFile(const std::string& path) {
  const std::string file = fs::absolute(path).lexically_normal().string();
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return ConfigError(file, "", "no such file");
  std::ifstream in(file, std::ios::binary);
  if (!in) return ConfigError(file, "", "cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return ParseKubeconfig(text.str(), file);
}

Result<Kubeconfig> LoadKubeconfig(const KubeconfigLoadingRules& rules) {
  if (!rules.explicit_path.empty()) return LoadKubeconfigFile(rules.explicit_path);
  Kubeconfig merged;
  std::set<std::string> seen;
  for (const auto& entry : rules.precedence) {
    const std::string file = fs::absolute(entry).lexically_normal().string();
    if (!seen.insert(file).second) continue;
    std::error_code ec;
    if (!fs::exists(file, ec)) continue;  // missing files in the chain are ignored
    auto one = LoadKubeconfigFile(file);
    if (!one.ok()) return one.error();
    MergeInto(&merged, std::move(one).value());
  }
  return merged;
}

Result<RestConfig> RestConfigFromKubeconfig(const Kubeconfig& config,
                                            const ConfigOverrides& overrides) {
  const std::string origin = config.files.empty() ? "(none)" : config.files.front();
  const std::string context_name =
      overrides.context.empty() ? config.current_context : overrides.context;
  RestConfig out;
  if (context_name.empty()) {
    if (overrides.master.empty()) {
      return ConfigError(origin, "current-context", "no context is set and no --master given");
    }
    out.host = overrides.master;
    return out;
  }
  const auto ctx = config.contexts.find(context_name);
  if (ctx == config.contexts.end()) {
    return ConfigError(origin, "contexts[" + context_name + "]", "context does not exist");
  }
  const KubeconfigContext& c = ctx->second;
  out.default_namespace = c.ns;
  if (!c.cluster.empty()) {
    const auto cl = config.clusters.find(c.cluster);
    if (cl == config.clusters.end()) {
      return ConfigError(origin, "contexts[" + context_name + "].cluster",
                         "cluster \"" + c.cluster + "\" does not exist");
    }
    out.host = cl->second.server;
    out.ca_file = cl->second.certificate_authority;
    out.ca_data = cl->second.certificate_authority_data;
    out.insecure = cl->second.insecure_skip_tls_verify;
    out.disable_compression = cl->second.disable_compression;
  }
  if (!c.user.empty()) {
    const auto u = config.users.find(c.user);
    if (u == config.users.end()) {
      return ConfigError(origin, "contexts[" + context_name + "].user",
                         "user \"" + c.user + "\" does not exist");
    }
    out.cert_file = u->second.client_certificate;
    out.cert_data = u->second.client_certificate_data;
    out.key_file = u->second.client_key;
    out.key_data = u->second.client_key_data;
    out.bearer_token = u->second.token;
    out.bearer_token_file = u->second.token_file;
  }
  if (!overrides.master.empty()) out.host = overrides.master;
  if (out.host.empty()) {
    return ConfigError(origin, "clusters[" + c.cluster + "].server", "no server set");
  }
  return out;
}

Result<RestConfig> BuildConfigFromFlags(const std::string& master, const std::string& kubeconfig,
                                        const std::string& context) {
  auto loaded = LoadKubeconfig(KubeconfigLoadingRules::FromEnvironment(kubeconfig));
  if (!loaded.ok()) return loaded.error();
  if (loaded->files.empty()) {
    if (master.empty()) return InClusterConfig();
    RestConfig out;
    out.host = master;
    return out;
  }
  return RestConfigFromKubeconfig(*loaded, ConfigOverrides{master, context});
}

}  // namespace kcm::client
