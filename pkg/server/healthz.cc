#include "pkg/server/healthz.h"

#include <algorithm>

namespace kcm::server {
namespace {

// The value of a query parameter's every occurrence ("exclude=a&exclude=b").
std::vector<std::string> QueryValues(std::string_view query, std::string_view key) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= query.size()) {
    size_t end = query.find('&', pos);
    if (end == std::string_view::npos) end = query.size();
    std::string_view item = query.substr(pos, end - pos);
    size_t eq = item.find('=');
    if (item.substr(0, eq) == key) {
      out.emplace_back(eq == std::string_view::npos ? "" : item.substr(eq + 1));
    }
    pos = end + 1;
  }
  return out;
}

}  // namespace

bool IsHealthEndpoint(std::string_view root) {
  return root == "/healthz" || root == "/livez" || root == "/readyz";
}

Response ServeHealth(const HealthChecks& all, HealthSlis& slis, const std::string& path,
                     std::string_view query) {
  size_t slash = path.find('/', 1);
  std::string root = path.substr(0, slash);
  std::vector<const HealthCheck*> checks;
  for (const auto& c : all.health) checks.push_back(&c);
  if (root == "/readyz") {
    for (const auto& c : all.ready) checks.push_back(&c);
  }
  if (slash != std::string::npos) {
    // /healthz/<name>: that one check (upstream's adaptCheckToHandler, which records no SLI).
    std::string name = path.substr(slash + 1);
    for (const HealthCheck* c : checks) {
      if (c->name != name) continue;
      Status s = c->check();
      if (s.ok()) return TextResponse(200, "ok");
      return TextResponse(500, "internal server error: " + s.error().message + "\n");
    }
    return TextResponse(404, "404 page not found\n");
  }
  std::vector<std::string> excluded = QueryValues(query, "exclude");
  bool verbose = !QueryValues(query, "verbose").empty();
  bool ok = true;
  std::string detail;
  std::string endpoint = root.substr(1);
  for (const HealthCheck* c : checks) {
    if (std::find(excluded.begin(), excluded.end(), c->name) != excluded.end()) {
      detail += "[+]" + c->name + " excluded: ok\n";
      continue;
    }
    Status s = c->check();
    slis.Observe(c->name, endpoint, s.ok());
    if (s.ok()) {
      detail += "[+]" + c->name + " ok\n";
    } else {
      ok = false;
      detail += "[-]" + c->name + " failed: " + s.error().message + "\n";
    }
  }
  if (ok) return TextResponse(200, verbose ? detail + endpoint + " check passed\n" : "ok");
  return TextResponse(500, detail + endpoint + " check failed\n");
}

}  // namespace kcm::server
