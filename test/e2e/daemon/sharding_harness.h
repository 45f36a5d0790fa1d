// The harness of the --sharding=namespace end-to-end tests (sharding_e2e_test.cc): a private
// testbed with the API server's audit log of writes on, replicas of the daemon binary each as its
// own service account (so the audit log tells which replica wrote what), and readers of the shard
// map, the workload, the audit log and the replicas' logs (which ranges each served when).
// Included by the sharding e2e test files only.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "pkg/api/json.h"
#include "pkg/api/shard_selector.h"
#include "pkg/sharding/shard_map.h"
#include "test/e2e/daemon/daemon_e2e_util.h"
#include "test/integration/framework/process.h"
#include "test/integration/framework/testenv.h"

namespace kcm::e2e {

using namespace std::chrono_literals;
using testenv::Eventually;

// Before the environment's SetUp runs `hack/testbed up`.
inline const bool kAuditOn = [] { return ::setenv("KCM_TESTBED_AUDIT", "writes", 1) == 0; }();
inline auto* const kEnv = testenv::RegisterTestbed({.nodes = 3});

// Lease timings of every replica here: a dead replica's namespaces are free after 6 s.
inline constexpr auto kLeaseDuration = 6s;
inline const std::vector<std::string> kLeaseFlags = {"--leader-elect-lease-duration=6s",
                                                     "--leader-elect-renew-deadline=4s",
                                                     "--leader-elect-retry-period=1s"};

// The RBAC objects (ClusterRole, Role) of deploy/kube-controller-manager-sharded.yaml, applied
// once: the replicas run with exactly the rights the sharded manifest ships.
inline bool ApplyShippedShardedRbac() {
  static const bool applied = [] {
    std::ifstream in(testenv::SourceDir() + "/deploy/kube-controller-manager-sharded.yaml");
    std::stringstream all;
    all << in.rdbuf();
    std::string docs, doc;
    std::istringstream lines(all.str() + "\n---\n");
    for (std::string line; std::getline(lines, line);) {
      if (line != "---") {
        doc += line + "\n";
        continue;
      }
      if (doc.find("\nkind: ClusterRole\n") != std::string::npos ||
          doc.find("\nkind: Role\n") != std::string::npos) {
        docs += "---\n" + doc;
      }
      doc.clear();
    }
    return !docs.empty() && kEnv->Kubectl({"apply", "-f", "-"}, 60s, docs).ok();
  }();
  return applied;
}

// A kubeconfig for service account kube-system/<name>, bound to the sharded manifest's roles.
inline std::string ServiceAccountKubeconfig(const std::string& name) {
  if (!ApplyShippedShardedRbac()) return "";
  const std::string subject =
      "subjects:\n- kind: ServiceAccount\n  name: " + name + "\n  namespace: kube-system\n";
  const std::string rbac =
      "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: " + name +
      "\n  namespace: kube-system\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: "
      "ClusterRoleBinding\nmetadata:\n  name: " +
      name +
      "\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: "
      "kube-controller-manager-cpp\n" +
      subject +
      "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: " +
      name +
      "\n  namespace: kube-system\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: "
      "Role\n  name: kube-controller-manager-cpp:leader-election\n" +
      subject;
  if (!kEnv->Kubectl({"apply", "-f", "-"}, 60s, rbac).ok()) return "";
  auto token = kEnv->Kubectl({"-n", "kube-system", "create", "token", name, "--duration=2h"});
  if (!token.ok()) return "";
  return WriteTokenKubeconfig(
      testing::TempDir() + "kcm-e2e-" + name + "-" + std::to_string(::getpid()) + ".kubeconfig",
      kEnv->info().server, kEnv->info().ca_file, token.out);
}

inline std::string UserOf(const std::string& service_account) {
  return "system:serviceaccount:kube-system:" + service_account;
}

// One replica: `--sharding=namespace` in lease group `group`, as service account `account`.
class Replica {
 public:
  Replica(const std::string& group, const std::string& account, std::vector<std::string> extra = {})
      : Replica(group, account, ServiceAccountKubeconfig(account), std::move(extra)) {}
  // With `kubeconfig` from ServiceAccountKubeconfig(account) made beforehand, so the process
  // starts at once (a replacement after a kill, as a kubelet restarts a container).
  Replica(const std::string& group, const std::string& account, const std::string& kubeconfig,
          std::vector<std::string> extra = {})
      : account_(account),
        port_(testenv::FreeLoopbackPort()),
        process_(Args(group, kubeconfig, port_, std::move(extra)),
                 testing::TempDir() + "kcm-sharding-" + std::to_string(::getpid()) + "-" +
                     std::to_string(port_) + ".log") {}

  bool Running() { return process_.Running(); }
  int StopWith(int sig, std::chrono::seconds limit = 40s) { return process_.StopWith(sig, limit); }
  std::string Log() const { return process_.Log(); }
  const std::string& account() const { return account_; }
  pid_t pid() const { return process_.pid(); }
  bool Ready() const { return testenv::HttpsGet(port_, "/readyz").first == 200; }
  // The identity it logged at start ("Sharding by namespace" identity="<identity>").
  std::string Identity() const {
    const std::string log = Log();
    const std::string mark = "\"Sharding by namespace\" identity=\"";
    size_t at = log.find(mark);
    if (at == std::string::npos) return "";
    at += mark.size();
    return log.substr(at, log.find('"', at) - at);
  }
  // A gauge from its /metrics (-1 when absent).
  double Metric(const std::string& name) const {
    auto [code, body] = testenv::HttpsGet(port_, "/metrics", kEnv->info().admin_token);
    if (code != 200) return -1;
    std::istringstream in(body);
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind(name + " ", 0) == 0) return std::stod(line.substr(name.size() + 1));
    }
    return -1;
  }

 private:
  static std::vector<std::string> Args(const std::string& group, const std::string& kubeconfig,
                                       int port, std::vector<std::string> extra) {
    const char* daemon = std::getenv("KCM_E2E_DAEMON");
    std::vector<std::string> args = {daemon != nullptr ? daemon : KCM_DAEMON_PATH,
                                     "--kubeconfig=" + kubeconfig,
                                     "--bind-address=127.0.0.1",
                                     "--secure-port=" + std::to_string(port),
                                     "--leader-elect=true",
                                     "--sharding=namespace",
                                     "--leader-elect-resource-name=" + group};
    args.insert(args.end(), kLeaseFlags.begin(), kLeaseFlags.end());
    for (auto& a : extra) args.push_back(std::move(a));
    return args;
  }

  std::string account_;
  int port_;
  testenv::DaemonProcess process_;
};

// The group's shard map, as the API server has it.
inline std::optional<sharding::ShardMap> ReadMap(const std::string& group) {
  auto r =
      kEnv->Kubectl({"-n", "kube-system", "get", "lease", group + "-shards", "-o",
                     "jsonpath={.metadata.annotations.kube-controller-manager-cpp/shard-map}"});
  if (!r.ok() || r.out.empty()) return std::nullopt;
  auto m = sharding::ShardMap::Parse(r.out);
  if (!m.ok()) return std::nullopt;
  return *m;
}

inline std::string OwnerOf(const sharding::ShardMap& map, const std::string& ns) {
  return map.At(api::ShardHash(ns)).owner;
}

inline std::set<std::string> Owners(const sharding::ShardMap& map) {
  std::set<std::string> out;
  for (const auto& e : map.entries()) out.insert(e.owner);
  return out;
}

inline std::string DeploymentYaml(const std::string& ns, int replicas) {
  return PauseWorkloadYaml("Deployment", "web", ns, replicas);
}

inline int Count(const std::string& ns, const std::string& kind) {
  auto r = kEnv->Kubectl({"-n", ns, "get", kind, "-o", "name"});
  if (!r.ok()) return -1;
  return static_cast<int>(std::count(r.out.begin(), r.out.end(), '\n'));
}

inline bool Available(const std::string& ns, int replicas) {
  auto r = kEnv->Kubectl({"-n", ns, "get", "deployment", "web", "-o",
                          "jsonpath={.status.availableReplicas}/{.status.updatedReplicas}"});
  const std::string want = std::to_string(replicas) + "/" + std::to_string(replicas);
  return r.ok() && r.out == want;
}

// Microseconds since the epoch, now.
inline int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A time a replica served a set of ranges: from its `"Serving shard ranges"
// shardSelector="<selector>"` log line to its `"Stopping shard ranges" shardSelector="<selector>"`
// line (ServedRanges::Start and ServedRanges::Stop), or to `end_us` when there is none (still
// serving, or killed then). A selector holds no double quote, so the quoted value is its text.
struct Served {
  api::ShardSelector shard;
  int64_t from_us = 0;
  int64_t to_us = 0;
};

inline std::vector<Served> ServedFromLog(const std::string& log, int64_t end_us) {
  std::vector<Served> out;
  std::map<std::string, size_t> open;  // selector text -> its entry in `out`
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    for (const std::string verb : {"Serving", "Stopping"}) {
      const std::string mark = "] \"" + verb + " shard ranges\" shardSelector=\"";
      const size_t at = line.find(mark);
      if (at == std::string::npos) continue;
      const size_t from = at + mark.size();
      const size_t end = line.find('"', from);
      if (end == std::string::npos) continue;
      const std::string text = line.substr(from, end - from);
      const auto t = KlogTime(line);
      if (!t) continue;
      if (verb == "Serving") {
        auto shard = api::ShardSelector::Parse(text);
        if (!shard.ok()) continue;
        open[text] = out.size();
        out.push_back({.shard = *shard, .from_us = *t, .to_us = end_us});
      } else if (auto it = open.find(text); it != open.end()) {
        out[it->second].to_us = *t;
        open.erase(it);
      }
    }
  }
  return out;
}

// One write (create, update, patch, delete) from the API server's audit log.
struct AuditWrite {
  int64_t at_us = 0;  // requestReceivedTimestamp, microseconds since the epoch
  std::string user, verb, resource, ns, name;
  int code = 0;  // responseStatus.code
};

// The writes in `ns` by anyone but the test itself (user admin), in the log's order.
inline std::vector<AuditWrite> AuditWrites(const std::string& ns) {
  std::ifstream in(kEnv->info().dir + "/logs/audit.log");
  std::vector<AuditWrite> out;
  const std::string in_ns = "\"namespace\":\"" + ns + "\"";
  for (std::string line; std::getline(in, line);) {
    if (line.find(in_ns) == std::string::npos) continue;
    auto event = api::json::Parse(line);
    if (!event.ok()) continue;
    auto str = [&](api::json::Path path) {
      const api::json::Value* v = api::json::GetPath(*event, path);
      return v != nullptr && v->is_string() ? v->as_string() : std::string();
    };
    AuditWrite w{.user = str({"user", "username"}),
                 .verb = str({"verb"}),
                 .resource = str({"objectRef", "resource"}),
                 .ns = str({"objectRef", "namespace"}),
                 .name = str({"objectRef", "name"})};
    const std::string sub = str({"objectRef", "subresource"});
    if (!sub.empty()) w.resource += "/" + sub;
    if (w.user == "admin" || w.ns != ns) continue;
    w.at_us = Rfc3339Micro(str({"requestReceivedTimestamp"})).value_or(0);
    const api::json::Value* code = api::json::GetPath(*event, {"responseStatus", "code"});
    if (code != nullptr && code->is_number())
      w.code = static_cast<int>(code->as_int64().value_or(0));
    out.push_back(std::move(w));
  }
  return out;
}

// "hh:mm:ss.mmm" UTC of microseconds since the epoch, to match the audit log's timestamps.
inline std::string UtcClock(int64_t us) {
  const time_t s = us / 1000000;
  struct tm t = {};
  gmtime_r(&s, &t);
  char buf[32];
  snprintf(buf, sizeof buf, "%02d:%02d:%02d.%03d", t.tm_hour, t.tm_min, t.tm_sec,
           static_cast<int>(us % 1000000 / 1000));
  return buf;
}

// Readers of API objects as the API server returns them (JSON): a string field (empty when
// absent), an integer field (0 when absent, -1 when not an integer), a list's items.
inline std::string Str(const api::json::Value& v, api::json::Path path) {
  const api::json::Value* s = api::json::GetPath(v, path);
  return s != nullptr && s->is_string() ? s->as_string() : std::string();
}

inline int64_t Int(const api::json::Value& v, api::json::Path path) {
  const api::json::Value* n = api::json::GetPath(v, path);
  return n != nullptr && n->is_number() ? n->as_int64().value_or(-1) : 0;
}

// The items of a list from the API server (GET <path>), or nullopt.
inline std::optional<api::json::Value::Array> List(int apiserver_port, const std::string& path) {
  auto [code, body] = testenv::HttpsGet(apiserver_port, path, kEnv->info().admin_token);
  if (code != 200) return std::nullopt;
  auto list = api::json::Parse(body);
  if (!list.ok() || list->Find("items") == nullptr || !list->Find("items")->is_array()) {
    return std::nullopt;
  }
  return std::move(list->Find("items")->as_array());
}

inline bool PodReady(const api::json::Value& pod) {
  const api::json::Value* conditions = api::json::GetPath(pod, {"status", "conditions"});
  if (conditions == nullptr || !conditions->is_array()) return false;
  for (const auto& c : conditions->as_array()) {
    if (Str(c, {"type"}) == "Ready") return Str(c, {"status"}) == "True";
  }
  return false;
}

// A pod that upstream's controllers count (controller.FilterActivePods): not terminating, not
// Succeeded or Failed.
inline bool PodActive(const api::json::Value& pod) {
  const std::string phase = Str(pod, {"status", "phase"});
  return api::json::GetPath(pod, {"metadata", "deletionTimestamp"}) == nullptr &&
         phase != "Succeeded" && phase != "Failed";
}

// "<namespace>/<label app>": the Deployment (of ChaosDeploymentYaml in the test) a pod or
// ReplicaSet belongs to.
inline std::string ChaosKey(const api::json::Value& object) {
  return Str(object, {"metadata", "namespace"}) + "/" + Str(object, {"metadata", "labels", "app"});
}

// What one poll saw of one Deployment, counted as upstream's rolling update (rolling.go) counts:
// its active pods, of those the available ones (Ready; minReadySeconds is 0), and the sum of its
// ReplicaSets' spec.replicas (deploymentutil.GetReplicaCountForReplicaSets), the number
// NewRSNewReplicas keeps within replicas + maxSurge.
struct Seen {
  int active = 0;
  int available = 0;
  int rs_replicas = 0;
  // Per ReplicaSet name: {spec.replicas, active pods}, for the report.
  std::map<std::string, std::pair<int, int>> sets;
};

// One poll: per ChaosKey what it saw, and per ReplicaSet ("<namespace>/<name>", from the pods'
// controller ownerReference) the UIDs of its pods, terminating ones included.
struct Snapshot {
  std::map<std::string, Seen> seen;
  std::map<std::string, std::vector<std::string>> pods_of;
};

// From one list of the chaos pods and one of their ReplicaSets; nullopt when a list failed.
inline std::optional<Snapshot> Poll(int apiserver_port) {
  auto pods = List(apiserver_port, "/api/v1/pods?labelSelector=e2e%3Dchaos");
  auto sets = List(apiserver_port, "/apis/apps/v1/replicasets?labelSelector=e2e%3Dchaos");
  if (!pods || !sets) return std::nullopt;
  Snapshot out;
  for (const auto& pod : *pods) {
    std::string owner;
    const api::json::Value* owners = api::json::GetPath(pod, {"metadata", "ownerReferences"});
    if (owners != nullptr && owners->is_array() && !owners->as_array().empty()) {
      owner = Str(owners->as_array()[0], {"name"});
      out.pods_of[Str(pod, {"metadata", "namespace"}) + "/" + owner].push_back(
          Str(pod, {"metadata", "uid"}));
    }
    if (!PodActive(pod)) continue;
    Seen& s = out.seen[ChaosKey(pod)];
    ++s.active;
    ++s.sets[owner].second;
    if (PodReady(pod)) ++s.available;
  }
  for (const auto& rs : *sets) {
    Seen& s = out.seen[ChaosKey(rs)];
    const int replicas = static_cast<int>(Int(rs, {"spec", "replicas"}));
    s.rs_replicas += replicas;
    s.sets[Str(rs, {"metadata", "name"})].first = replicas;
  }
  return out;
}

// " <ReplicaSet> <spec.replicas>/<active pods>" for each ReplicaSet of a Seen.
inline std::string SetsText(const Seen& seen) {
  std::string out;
  for (const auto& [name, counts] : seen.sets) {
    out += " " + name + " " + std::to_string(counts.first) + "/" + std::to_string(counts.second);
  }
  return out;
}

// Sleeps `d` or until `stop`.
inline void SleepFor(std::stop_token stop, std::chrono::milliseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (!stop.stop_requested() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(
        std::min<std::chrono::nanoseconds>(50ms, until - std::chrono::steady_clock::now()));
  }
}

// Three replicas and namespaces with a Deployment each, all available.
class ShardingE2E : public ::testing::Test {
 protected:
  void StartReplicas(const std::string& group, int n) {
    group_ = group;
    for (int i = 0; i < n; ++i) AddReplica();
    for (auto& r : replicas_) {
      ASSERT_TRUE(Eventually([&] { return r->Ready(); }, 60s)) << r->Log();
    }
    ASSERT_TRUE(Eventually(
        [&] {
          auto m = ReadMap(group_);
          return m && Owners(*m).size() == replicas_.size() && !Owners(*m).contains("");
        },
        30s))
        << "the replicas did not divide the space";
  }
  void AddReplica() {
    replicas_.push_back(
        std::make_unique<Replica>(group_, group_ + "-" + std::to_string(next_account_++)));
  }
  // Namespaces first; once the coordinator has rebalanced for them, a Deployment in each.
  void CreateWorkload(const std::string& prefix, int namespaces, int replicas) {
    ASSERT_NO_FATAL_FAILURE(CreateNamespaces(prefix, namespaces));
    for (const auto& ns : namespaces_) {
      auto applied = kEnv->Kubectl({"apply", "-f", "-"}, 60s, DeploymentYaml(ns, replicas));
      ASSERT_TRUE(applied.ok()) << applied.Describe();
    }
    for (const auto& ns : namespaces_) {
      ASSERT_TRUE(Eventually([&] { return Available(ns, replicas); }, 90s)) << ns;
    }
  }
  // Namespaces <prefix>0.. and then the map unchanged for 5 s: the coordinator re-places only after
  // the load stayed uneven for three retry periods (3 s here, RebalanceGate), so a shorter quiet
  // spell could end just before it moves.
  void CreateNamespaces(const std::string& prefix, int namespaces) {
    for (int i = 0; i < namespaces; ++i) {
      const std::string ns = prefix + std::to_string(i);
      namespaces_.push_back(ns);
      ASSERT_TRUE(kEnv->Kubectl({"create", "namespace", ns}).ok());
    }
    std::string last;
    auto since = std::chrono::steady_clock::now();
    ASSERT_TRUE(Eventually(
        [&] {
          auto m = ReadMap(group_);
          const std::string now = m ? m->Serialize() : "";
          if (now != last) {
            last = now;
            since = std::chrono::steady_clock::now();
          }
          return !now.empty() && std::chrono::steady_clock::now() - since >= 5s;
        },
        30s, 200ms));
  }
  // The replica serving `ns` now.
  Replica* ServerOf(const std::string& ns) {
    auto m = ReadMap(group_);
    if (!m) return nullptr;
    const std::string owner = OwnerOf(*m, ns);
    for (auto& r : replicas_) {
      if (r->Identity() == owner) return r.get();
    }
    return nullptr;
  }
  // Every test namespace was written only by the replica serving it now (from the audit log, once
  // the API server has written it); how many of them each replica serves, by account.
  // Every namespace is written only while its writer served it (ExpectWritesWhileServed: the map
  // may move a namespace as the workload's pods appear, balance by work) and has a server now;
  // returns how many of the test's namespaces each replica serves now, by account.
  std::map<std::string, int> ExpectWrittenByTheirServers() {
    std::this_thread::sleep_for(2s);  // the API server has written its audit lines
    const WriteCheck writes = ExpectWritesWhileServed({});
    EXPECT_GT(writes.checked, 0);
    std::map<std::string, int> per_replica;
    for (const auto& ns : namespaces_) {
      Replica* server = ServerOf(ns);
      EXPECT_NE(server, nullptr) << ns;
      if (server != nullptr) ++per_replica[server->account()];
    }
    return per_replica;
  }

  // One writer per namespace at a time, from the replicas' own logs and the audit log: every
  // write by a replica in the test's namespaces (events aside: one may still be on its way when
  // its range is stopped) falls within a time it served the namespace, or 500 ms after (requests
  // in flight when it began stopping or was killed), and within no time another replica served
  // it. `killed_at`: when a replica was killed (its serving ends there, not at a log line).
  struct WriteCheck {
    int checked = 0;
    std::map<std::string, std::vector<Served>> served;  // by audit user
  };
  WriteCheck ExpectWritesWhileServed(const std::map<Replica*, int64_t>& killed_at) {
    WriteCheck out;
    for (auto& r : replicas_) {
      const auto killed = killed_at.find(r.get());
      out.served[UserOf(r->account())] =
          ServedFromLog(r->Log(), killed != killed_at.end() ? killed->second
                                                            : std::numeric_limits<int64_t>::max());
    }
    int unserved_writes = 0, shared_writes = 0;
    for (const auto& ns : namespaces_) {
      for (const auto& w : AuditWrites(ns)) {
        if (w.resource == "events" || !out.served.contains(w.user)) continue;
        ++out.checked;
        bool own = false;
        std::string other;
        for (const auto& [user, times] : out.served) {
          for (const auto& s : times) {
            if (!s.shard.Matches(ns) || w.at_us < s.from_us) continue;
            if (user == w.user && w.at_us - 500000 <= s.to_us) own = true;
            if (user != w.user && w.at_us <= s.to_us) other = user;
          }
        }
        if (!own && ++unserved_writes <= 5) {
          ADD_FAILURE() << UtcClock(w.at_us) << " UTC " << w.user << " " << w.verb << " "
                        << w.resource << " " << ns << "/" << w.name
                        << ": the replica did not serve the namespace then";
        }
        if (!other.empty() && ++shared_writes <= 5) {
          ADD_FAILURE() << UtcClock(w.at_us) << " UTC " << w.user << " " << w.verb << " "
                        << w.resource << " " << ns << "/" << w.name << " while " << other
                        << " served the namespace";
        }
      }
    }
    EXPECT_EQ(unserved_writes, 0);
    EXPECT_EQ(shared_writes, 0);
    return out;
  }
  // No surplus: one ReplicaSet and exactly `replicas` pods in every namespace.
  void ExpectNoSurplus(int replicas) {
    for (const auto& ns : namespaces_) {
      EXPECT_EQ(Count(ns, "replicasets"), 1) << ns;
      EXPECT_EQ(Count(ns, "pods"), replicas) << ns;
    }
  }
  void TearDown() override {
    for (auto& r : replicas_) {
      if (r->Running()) r->StopWith(SIGTERM, 30s);
    }
    for (const auto& ns : namespaces_) {
      kEnv->Kubectl({"delete", "namespace", ns, "--wait=false"});
    }
  }

  std::string group_;
  int next_account_ = 0;
  std::vector<std::unique_ptr<Replica>> replicas_;
  std::vector<std::string> namespaces_;
};

}  // namespace kcm::e2e
