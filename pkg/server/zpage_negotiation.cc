#include "pkg/server/zpage_negotiation.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <vector>

#include "pkg/server/zpage_encoding.h"
#include "pkg/util/strings.h"

namespace kcm::server {
namespace {

namespace json = api::json;

// One clause of an Accept header as goautoneg's ParseAccept reads it.
struct Clause {
  std::string type;
  std::string subtype;
  double q = 1.0;
  std::map<std::string, std::string> params;
};

std::string_view TrimSpace(std::string_view s) {
  return Trim(s, " ");
}

// Splits at the first `sep`: {before, after}; after is empty when `sep` is absent.
std::pair<std::string_view, std::string_view> Cut(std::string_view s, char sep) {
  size_t i = s.find(sep);
  if (i == std::string_view::npos) return {s, {}};
  return {s.substr(0, i), s.substr(i + 1)};
}

// goautoneg.ParseAccept: a clause without '/' is dropped unless it is "*"; a parameter without
// exactly one '=' is dropped; q that is not a number counts as 0. Sorted by q, then by a
// concrete type and subtype ahead of wildcards.
std::vector<Clause> ParseAccept(std::string_view header) {
  std::vector<Clause> out;
  while (!header.empty()) {
    auto [part, rest] = Cut(header, ',');
    header = rest;
    part = TrimSpace(part);
    auto [media, params] = Cut(part, ';');
    auto [type, subtype_rest] = Cut(media, '/');
    Clause c;
    c.type = std::string(TrimSpace(type));
    if (subtype_rest.empty()) {
      if (c.type != "*") continue;
      c.subtype = "*";
    } else {
      auto [subtype, extra] = Cut(subtype_rest, '/');
      if (!extra.empty()) continue;
      c.subtype = std::string(TrimSpace(subtype));
    }
    while (!params.empty()) {
      auto [param, more] = Cut(params, ';');
      params = more;
      auto [key, value_rest] = Cut(param, '=');
      if (value_rest.empty() || value_rest.find('=') != std::string_view::npos) continue;
      std::string k(TrimSpace(key));
      if (k == "q") {
        char* end = nullptr;
        std::string v(value_rest);
        c.q = std::strtod(v.c_str(), &end);
        if (end == v.c_str()) c.q = 0;
      } else {
        c.params[k] = std::string(TrimSpace(value_rest));
      }
    }
    out.push_back(std::move(c));
  }
  std::stable_sort(out.begin(), out.end(), [](const Clause& a, const Clause& b) {
    if (a.q != b.q) return a.q > b.q;
    if ((a.type != "*") != (b.type != "*")) return a.type != "*";
    return a.subtype != "*" && b.subtype == "*";
  });
  return out;
}

struct MediaType {
  const char* type;
  const char* subtype;
  ZpageFormat::Type format;
};

// Upstream's serializers for the z-pages, in its order (protobuf and, with its gate off, CBOR
// are filtered out); the 406 message lists them.
constexpr MediaType kMediaTypes[] = {
    {"application", "json", ZpageFormat::Type::kJson},
    {"application", "yaml", ZpageFormat::Type::kYaml},
    {"text", "plain", ZpageFormat::Type::kText},
};

// goautoneg's clause matching: the same type and subtype, a subtype wildcard, or "*/*".
bool Matches(const Clause& c, const MediaType& m) {
  if (c.type == "*") return c.subtype == "*";
  return c.type == m.type && (c.subtype == "*" || c.subtype == m.subtype);
}

// acceptMediaTypeOptions under the z-pages' restrictions: text/plain only without a kind; JSON
// and YAML only with a recognized one; a stream or a server version is never served.
std::optional<ZpageFormat> Accepts(const Clause& c, const MediaType& m, std::string_view kind) {
  ZpageFormat f;
  f.type = m.format;
  bool convert = false;
  std::string group, version, as;
  for (const auto& [k, v] : c.params) {
    if (k == "as" || k == "g" || k == "v") {
      convert = true;
      (k == "as" ? as : k == "g" ? group : version) = v;
    } else if ((k == "stream" || k == "sv") && !v.empty()) {
      return std::nullopt;
    } else if (k == "pretty") {
      f.pretty = v == "1";
    }
  }
  if (m.format == ZpageFormat::Type::kText) {
    if (convert) return std::nullopt;
    return f;
  }
  if (!convert || group != kZpageGroup || as != kind ||
      (version != "v1beta1" && version != "v1alpha1")) {
    return std::nullopt;
  }
  f.version = version;
  f.deprecated = version == "v1alpha1";
  // upstream answers with the media type it served, the kind spelled out.
  f.content_type =
      std::string(m.type) + "/" + m.subtype + ";g=" + group + ";v=" + version + ";as=" + as;
  return f;
}

// ?pretty=<bool>, else a browser's or curl's User-Agent (upstream's isPrettyPrint).
bool PrettyByRequest(const Request& r) {
  for (std::string_view rest = r.query; !rest.empty();) {
    auto [item, more] = Cut(rest, '&');
    rest = more;
    auto [key, value] = Cut(item, '=');
    if (key == "pretty" && !value.empty()) {
      return value == "1" || value == "t" || value == "T" || value == "true" || value == "TRUE" ||
             value == "True";
    }
  }
  const std::string& ua = r.user_agent;
  return ua.starts_with("curl") || ua.starts_with("Wget") || ua.starts_with("Mozilla/5.0");
}

// upstream's ErrorNegotiated: the 406 Status is negotiated again without the z-page's kind
// restriction, so a plain application/json or application/yaml clause gets it in that form;
// otherwise it is written as raw indented JSON (WriteRawJSON).
Response NotAcceptable(const Request& request, const std::vector<Clause>& clauses) {
  std::string message = "only the following media types are accepted: ";
  for (size_t i = 0; i < std::size(kMediaTypes); ++i) {
    message += std::string(i ? ", " : "") + kMediaTypes[i].type + "/" + kMediaTypes[i].subtype;
  }
  json::Value status = json::Value::MakeObject({
      {"kind", json::Value::String("Status")},
      {"apiVersion", json::Value::String("v1")},
      {"metadata", json::Value::MakeObject()},
      {"status", json::Value::String("Failure")},
      {"message", json::Value::String(message)},
      {"reason", json::Value::String("NotAcceptable")},
      {"code", json::Value::Int(406)},
  });
  for (const Clause& c : clauses) {
    for (const MediaType& m : kMediaTypes) {
      if (m.format == ZpageFormat::Type::kText || !Matches(c, m)) continue;
      const bool kind_asked =
          c.params.contains("as") || c.params.contains("g") || c.params.contains("v");
      auto stream = c.params.find("stream");
      if (kind_asked || (stream != c.params.end() && !stream->second.empty())) continue;
      Response r{406, std::string(m.type) + "/" + m.subtype, {}, {}};
      if (m.format == ZpageFormat::Type::kYaml) {
        r.body = Yaml(status);
      } else {
        auto pretty = c.params.find("pretty");
        r.body = (pretty != c.params.end() && pretty->second == "1") || PrettyByRequest(request)
                     ? IndentedJson(status)
                     : json::Serialize(status) + "\n";
      }
      return r;
    }
  }
  return Response{406, "application/json", IndentedJson(status), {}};
}

}  // namespace

std::variant<ZpageFormat, Response> NegotiateZpage(const Request& request, std::string_view kind) {
  if (TrimSpace(request.accept).empty()) return ZpageFormat{};
  const std::vector<Clause> clauses = ParseAccept(request.accept);
  for (const Clause& c : clauses) {
    for (const MediaType& m : kMediaTypes) {
      if (!Matches(c, m)) continue;
      if (auto f = Accepts(c, m, kind)) {
        if (!f->pretty) f->pretty = PrettyByRequest(request);
        return *f;
      }
    }
  }
  return NotAcceptable(request, clauses);
}

Response StructuredZpage(const ZpageFormat& format, const json::Value& object,
                         std::string_view endpoint) {
  Response r;
  r.content_type = format.content_type;
  if (format.type == ZpageFormat::Type::kYaml) {
    r.body = Yaml(object);
  } else {
    // Go's json.MarshalIndent when pretty (no newline after it), its json.Encoder otherwise.
    r.body = format.pretty ? IndentedJson(object) : json::Serialize(object) + "\n";
  }
  if (format.deprecated) {
    r.headers.emplace_back("Warning", "299 - \"This version of the " + std::string(endpoint) +
                                          " endpoint is deprecated. Please use a newer "
                                          "version.\"");
  }
  return r;
}

}  // namespace kcm::server
