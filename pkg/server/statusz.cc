#include "pkg/server/statusz.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

#include "pkg/server/zpage_negotiation.h"
#include "pkg/server/zpage_text.h"

namespace kcm::server {
namespace {

namespace json = api::json;

std::vector<std::string> AggregatePaths(const std::vector<std::string>& paths) {
  std::set<std::string> roots;
  for (const std::string& p : paths) {
    if (p.size() < 2 || p[0] != '/') continue;
    roots.insert(p.substr(0, p.find('/', 1)));
  }
  return {roots.begin(), roots.end()};
}

// Go's time.UnixDate in local time: "Sun Dec  6 03:30:00 UTC 2026".
std::string UnixDate(time_t t) {
  struct tm local {};
  localtime_r(&t, &local);
  char buf[64];
  size_t n = strftime(buf, sizeof(buf), "%a %b %e %H:%M:%S %Z %Y", &local);
  return std::string(buf, n);
}

// metav1.Time's JSON: RFC 3339 in UTC, whole seconds.
std::string Rfc3339(time_t t) {
  struct tm utc {};
  gmtime_r(&t, &utc);
  char buf[32];
  size_t n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return std::string(buf, n);
}

// upstream's uptime(): "1 hr 02 min 03 sec".
std::string Uptime(int64_t seconds) {
  char buf[64];
  snprintf(buf, sizeof(buf), "%lld hr %02lld min %02lld sec",
           static_cast<long long>(seconds / 3600), static_cast<long long>((seconds / 60) % 60),
           static_cast<long long>(seconds % 60));
  return buf;
}

json::Value StatuszObject(const StatuszInfo& info, const std::vector<std::string>& paths,
                          const std::string& version, time_t start, int64_t uptime) {
  json::Value::Array path_items;
  for (const auto& p : paths) path_items.push_back(json::Value::String(p));
  json::Value o = json::Value::MakeObject({
      {"kind", json::Value::String("Statusz")},
      {"apiVersion", json::Value::String(std::string(kZpageGroup) + "/" + version)},
      {"metadata", json::Value::MakeObject({{"name", json::Value::String(info.component)}})},
      {"startTime", json::Value::String(Rfc3339(start))},
      {"uptimeSeconds", json::Value::Int(uptime)},
      {"goVersion", json::Value::String(info.go_version)},
      {"binaryVersion", json::Value::String(info.binary_version)},
  });
  if (!info.emulation_version.empty()) {
    o.Set("emulationVersion", json::Value::String(info.emulation_version));
  }
  // Upstream's Paths has no omitempty: no paths is null.
  o.Set("paths", paths.empty() ? json::Value::Null() : json::Value::MakeArray(path_items));
  return o;
}

std::string TextPage(const StatuszInfo& info, const std::vector<std::string>& paths, time_t start,
                     int64_t uptime) {
  const std::string d = RandomZpageSeparator();
  std::string joined;
  for (const auto& p : paths) joined += (joined.empty() ? "" : " ") + p;
  std::string out = ZpageTextHeader(info.component, "statusz");
  out += "\nStarted" + d + " " + HtmlEscape(UnixDate(start)) + "\n";
  out += "Up" + d + " " + Uptime(uptime) + "\n";
  out += "Go version" + d + " " + HtmlEscape(info.go_version) + "\n";
  out += "Binary version" + d + " " + HtmlEscape(info.binary_version) + "\n";
  if (!info.emulation_version.empty()) {
    out += "Emulation version" + d + " " + HtmlEscape(info.emulation_version);
  }
  out += "\n";
  if (!joined.empty()) out += "Paths" + d + " " + HtmlEscape(joined);
  out += "\n";
  return out;
}

}  // namespace

Handler NewStatuszHandler(StatuszInfo info) {
  std::vector<std::string> paths = AggregatePaths(info.paths);
  // Every method gets the page, as upstream's handler does (the authorizer saw the verb).
  return [info = std::move(info), paths = std::move(paths)](const Request& request) {
    const time_t start = static_cast<time_t>(info.start_time_seconds);
    const int64_t uptime = std::max<int64_t>(
        0, static_cast<int64_t>(std::floor(
               std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
                   .count() -
               info.start_time_seconds)));
    auto negotiated = NegotiateZpage(request, "Statusz");
    if (auto* error = std::get_if<Response>(&negotiated)) return *error;
    const auto& format = std::get<ZpageFormat>(negotiated);
    if (format.type == ZpageFormat::Type::kText) {
      return TextResponse(200, TextPage(info, paths, start, uptime));
    }
    return StructuredZpage(format, StatuszObject(info, paths, format.version, start, uptime),
                           "statusz");
  };
}

}  // namespace kcm::server
