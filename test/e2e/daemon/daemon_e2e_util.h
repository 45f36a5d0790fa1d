// What the e2e tests of the daemon binary share: times read from the daemon's klog lines and the
// API server's audit log, and the slow-scale-up ReplicaSet they act on mid-way. Header-only.
#pragma once

#include <stdio.h>
#include <time.h>

#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace kcm::e2e {

// Microseconds since the epoch of a klog text line's header "Lmmdd hh:mm:ss.uuuuuu" (local time;
// klog prints no year, so the current one is taken).
inline std::optional<int64_t> KlogTime(const std::string& line) {
  if (line.size() < 21) return std::nullopt;
  struct tm t = {};
  if (sscanf(line.c_str() + 1, "%2d%2d %2d:%2d:%2d", &t.tm_mon, &t.tm_mday, &t.tm_hour, &t.tm_min,
             &t.tm_sec) != 5) {
    return std::nullopt;
  }
  const time_t now = time(nullptr);
  struct tm today = {};
  localtime_r(&now, &today);
  t.tm_year = today.tm_year;
  t.tm_mon -= 1;
  t.tm_isdst = -1;
  return static_cast<int64_t>(mktime(&t)) * 1000000 + std::stoll(line.substr(15, 6));
}

// The time of the first log line at or after `after_us` containing `text`.
inline std::optional<int64_t> LogLineTime(const std::string& log, const std::string& text,
                                          int64_t after_us = 0) {
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find(text) == std::string::npos) continue;
    auto t = KlogTime(line);
    if (t && *t >= after_us) return t;
  }
  return std::nullopt;
}

// Microseconds since the epoch of an RFC 3339 UTC time with microseconds (audit timestamps).
inline std::optional<int64_t> Rfc3339Micro(const std::string& s) {
  struct tm t = {};
  int micros = 0;
  if (sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%6dZ", &t.tm_year, &t.tm_mon, &t.tm_mday,
             &t.tm_hour, &t.tm_min, &t.tm_sec, &micros) != 7) {
    return std::nullopt;
  }
  t.tm_year -= 1900;
  t.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&t)) * 1000000 + micros;
}

// A workload of `kind` (ReplicaSet or Deployment, apps/v1) named `name` in `ns`: `replicas`
// pause pods labelled app=<name>.
inline std::string PauseWorkloadYaml(const std::string& kind, const std::string& name,
                                     const std::string& ns, int replicas) {
  return "apiVersion: apps/v1\nkind: " + kind + "\nmetadata:\n  name: " + name +
         "\n  namespace: " + ns + "\nspec:\n  replicas: " + std::to_string(replicas) +
         "\n  selector:\n    matchLabels:\n      app: " + name +
         "\n  template:\n    metadata:\n      labels:\n        app: " + name +
         "\n    spec:\n      containers:\n      - name: pause\n"
         "        image: registry.k8s.io/pause:3.10\n";
}

// ReplicaSet "big" in `ns`: `replicas` pause pods labelled app=big.
inline std::string ReplicaSetYaml(const std::string& ns, int replicas) {
  return PauseWorkloadYaml("ReplicaSet", "big", ns, replicas);
}

// Writes a kubeconfig to `path` that reaches `server` (CA file `ca`) with bearer `token` (its
// trailing newline, as `kubectl create token` prints it, trimmed). `path`, or "" if not written.
inline std::string WriteTokenKubeconfig(const std::string& path, const std::string& server,
                                        const std::string& ca, std::string token) {
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  std::ofstream out(path);
  out << "apiVersion: v1\nkind: Config\nclusters:\n- name: testbed\n  cluster:\n    server: "
      << server << "\n    certificate-authority: " << ca << "\nusers:\n- name: u\n  user:\n"
      << "    token: " << token << "\ncontexts:\n- name: c\n  context:\n    cluster: testbed\n"
      << "    user: u\ncurrent-context: c\n";
  return out ? path : "";
}

}  // namespace kcm::e2e
