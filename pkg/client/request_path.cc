#include "pkg/client/request_path.h"

#include <algorithm>

namespace kcm::client {
namespace {

bool Unreserved(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.' || c == '~';
}

void AppendPercent(std::string* out, unsigned char c) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  out->push_back('%');
  out->push_back(kHex[c >> 4]);
  out->push_back(kHex[c & 0xF]);
}

// Path segments: object names are DNS labels in practice, but escape anything odd rather than
// let it change the path.
std::string PathEscape(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (Unreserved(c) || c == ':' || c == '@') {
      out.push_back(static_cast<char>(c));
    } else {
      AppendPercent(&out, c);
    }
  }
  return out;
}

}  // namespace

std::string ResourcePath(const GroupVersionResource& gvr, std::string_view ns,
                         std::string_view name, std::string_view subresource) {
  std::string path =
      gvr.group.empty() ? "/api/" + gvr.version : "/apis/" + gvr.group + "/" + gvr.version;
  if (!ns.empty()) path += "/namespaces/" + PathEscape(ns);
  path += "/" + gvr.resource;
  if (!name.empty()) {
    path += "/" + PathEscape(name);
    if (!subresource.empty()) path += "/" + PathEscape(subresource);
  }
  return path;
}

std::string QueryEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (Unreserved(c)) {
      out.push_back(static_cast<char>(c));
    } else if (c == ' ') {
      out.push_back('+');
    } else {
      AppendPercent(&out, c);
    }
  }
  return out;
}

std::string EncodeQuery(const QueryParams& params) {
  QueryParams sorted = params;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  for (const auto& [k, v] : sorted) {
    if (!out.empty()) out += '&';
    out += QueryEscape(k);
    out += '=';
    out += QueryEscape(v);
  }
  return out;
}

void AppendListOptions(const api::ListOptions& o, bool watch, QueryParams* params) {
  if (!o.label_selector.empty()) params->emplace_back("labelSelector", o.label_selector);
  if (!o.field_selector.empty()) params->emplace_back("fieldSelector", o.field_selector);
  if (!o.shard_selector.empty()) params->emplace_back("shardSelector", o.shard_selector);
  if (!o.resource_version.empty()) params->emplace_back("resourceVersion", o.resource_version);
  if (!o.resource_version_match.empty()) {
    params->emplace_back("resourceVersionMatch", o.resource_version_match);
  }
  if (o.timeout_seconds) params->emplace_back("timeoutSeconds", std::to_string(*o.timeout_seconds));
  if (watch) {
    params->emplace_back("watch", "true");
    if (o.allow_watch_bookmarks) params->emplace_back("allowWatchBookmarks", "true");
    if (o.send_initial_events) params->emplace_back("sendInitialEvents", "true");
  } else {
    if (o.limit > 0) params->emplace_back("limit", std::to_string(o.limit));
    if (!o.continue_token.empty()) params->emplace_back("continue", o.continue_token);
  }
}

}  // namespace kcm::client
