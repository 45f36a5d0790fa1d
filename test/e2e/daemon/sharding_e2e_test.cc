// --sharding=namespace end to end: replicas of the daemon binary against a private testbed whose
// API server filters by shardSelector. Each replica runs as its own service account, so the API
// server's audit log (KCM_TESTBED_AUDIT=writes) tells which replica wrote what:
// - three replicas divide the namespaces, each namespace is written by exactly one of them, and
//   the server (not the replicas) filters their lists and watches;
// - kill -9 of a replica: its namespaces are served again within the lease duration + 5 s, and a
//   replica that joins takes a share; nothing is created twice;
// - SIGTERM: its namespaces are served elsewhere within 2 s;
// - a replica that loses its member Lease mid-sync writes nothing after the loss, and the others
//   finish its work.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "pkg/api/json.h"
#include "pkg/sharding/shard_map.h"
#include "test/integration/framework/process.h"
#include "test/integration/framework/testenv.h"

namespace kcm::e2e {
namespace {

using namespace std::chrono_literals;
using testenv::Eventually;

// Before the environment's SetUp runs `hack/testbed up`.
const bool kAuditOn = [] { return ::setenv("KCM_TESTBED_AUDIT", "writes", 1) == 0; }();
auto* const kEnv = testenv::RegisterTestbed({.nodes = 3});

// Lease timings of every replica here: a dead replica's namespaces are free after 6 s.
constexpr auto kLeaseDuration = 6s;
const std::vector<std::string> kLeaseFlags = {"--leader-elect-lease-duration=6s",
                                              "--leader-elect-renew-deadline=4s",
                                              "--leader-elect-retry-period=1s"};

// A kubeconfig for service account kube-system/<name> (cluster-admin: this file tests who writes
// what, not RBAC; deploy/'s sharded RBAC is checked by the manifests tests).
std::string ServiceAccountKubeconfig(const std::string& name) {
  const std::string rbac = "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: " + name +
                           "\n  namespace: kube-system\n---\napiVersion: rbac.authorization.k8s.io"
                           "/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: " +
                           name +
                           "\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: "
                           "ClusterRole\n  name: cluster-admin\nsubjects:\n- kind: "
                           "ServiceAccount\n  name: " +
                           name + "\n  namespace: kube-system\n";
  if (!kEnv->Kubectl({"apply", "-f", "-"}, 60s, rbac).ok()) return "";
  auto token = kEnv->Kubectl({"-n", "kube-system", "create", "token", name, "--duration=2h"});
  if (!token.ok()) return "";
  std::string t = token.out;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  const std::string path =
      testing::TempDir() + "kcm-e2e-" + name + "-" + std::to_string(::getpid()) + ".kubeconfig";
  std::ofstream out(path);
  out << "apiVersion: v1\nkind: Config\nclusters:\n- name: testbed\n  cluster:\n    server: "
      << kEnv->info().server << "\n    certificate-authority: " << kEnv->info().ca_file
      << "\nusers:\n- name: u\n  user:\n    token: " << t
      << "\ncontexts:\n- name: c\n  context:\n    cluster: testbed\n    user: u\n"
      << "current-context: c\n";
  return out ? path : "";
}

std::string UserOf(const std::string& service_account) {
  return "system:serviceaccount:kube-system:" + service_account;
}

// One replica: `--sharding=namespace` in lease group `group`, as service account `account`.
class Replica {
 public:
  Replica(const std::string& group, const std::string& account, std::vector<std::string> extra = {})
      : account_(account),
        port_(testenv::FreeLoopbackPort()),
        process_(Args(group, ServiceAccountKubeconfig(account), port_, std::move(extra)),
                 testing::TempDir() + "kcm-sharding-" + std::to_string(::getpid()) + "-" +
                     std::to_string(port_) + ".log") {}

  bool Running() { return process_.Running(); }
  int StopWith(int sig, std::chrono::seconds limit = 40s) { return process_.StopWith(sig, limit); }
  std::string Log() const { return process_.Log(); }
  const std::string& account() const { return account_; }
  bool Ready() const { return testenv::HttpsGet(port_, "/readyz").first == 200; }
  // The identity it logged at start ("Sharding by namespace as <identity> (").
  std::string Identity() const {
    const std::string log = Log();
    const std::string mark = "Sharding by namespace as ";
    size_t at = log.find(mark);
    if (at == std::string::npos) return "";
    at += mark.size();
    return log.substr(at, log.find(' ', at) - at);
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
std::optional<sharding::ShardMap> ReadMap(const std::string& group) {
  auto r =
      kEnv->Kubectl({"-n", "kube-system", "get", "lease", group + "-shards", "-o",
                     "jsonpath={.metadata.annotations.kube-controller-manager-cpp/shard-map}"});
  if (!r.ok() || r.out.empty()) return std::nullopt;
  auto m = sharding::ShardMap::Parse(r.out);
  if (!m.ok()) return std::nullopt;
  return *m;
}

std::string OwnerOf(const sharding::ShardMap& map, const std::string& ns) {
  return map.At(api::ShardHash(ns)).owner;
}

std::set<std::string> Owners(const sharding::ShardMap& map) {
  std::set<std::string> out;
  for (const auto& e : map.entries()) out.insert(e.owner);
  return out;
}

std::string DeploymentYaml(const std::string& ns, int replicas) {
  return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: " + ns +
         "\nspec:\n  replicas: " + std::to_string(replicas) +
         "\n  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n"
         "      labels:\n        app: web\n    spec:\n      containers:\n      - name: pause\n"
         "        image: registry.k8s.io/pause:3.10\n";
}

int Count(const std::string& ns, const std::string& kind) {
  auto r = kEnv->Kubectl({"-n", ns, "get", kind, "-o", "name"});
  if (!r.ok()) return -1;
  return static_cast<int>(std::count(r.out.begin(), r.out.end(), '\n'));
}

bool Available(const std::string& ns, int replicas) {
  auto r = kEnv->Kubectl({"-n", ns, "get", "deployment", "web", "-o",
                          "jsonpath={.status.availableReplicas}/{.status.updatedReplicas}"});
  const std::string want = std::to_string(replicas) + "/" + std::to_string(replicas);
  return r.ok() && r.out == want;
}

// The users that wrote (create, update, patch, delete) in `ns`, from the audit log.
std::set<std::string> Writers(const std::string& ns) {
  std::ifstream in(kEnv->info().dir + "/logs/audit.log");
  std::set<std::string> out;
  std::string line;
  const std::string in_ns = "\"namespace\":\"" + ns + "\"";
  while (std::getline(in, line)) {
    if (line.find(in_ns) == std::string::npos) continue;
    const size_t u = line.find("\"username\":\"");
    if (u == std::string::npos) continue;
    const size_t start = u + 12;
    const std::string user = line.substr(start, line.find('"', start) - start);
    if (user == "admin") continue;  // the test itself
    out.insert(user);
  }
  return out;
}

// Microseconds since the epoch, now.
int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Microseconds since the epoch of a klog text line's header "Lmmdd hh:mm:ss.uuuuuu" (local time).
std::optional<int64_t> KlogTime(const std::string& line) {
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

// The time of the first log line after `after_us` containing `text`.
std::optional<int64_t> LogLineTime(const std::string& log, const std::string& text,
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
  // Namespaces first; once the coordinator has rebalanced for them (the map unchanged for 3 s),
  // a Deployment in each.
  void CreateWorkload(const std::string& prefix, int namespaces, int replicas) {
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
          return !now.empty() && std::chrono::steady_clock::now() - since >= 3s;
        },
        30s, 200ms));
    for (const auto& ns : namespaces_) {
      auto applied = kEnv->Kubectl({"apply", "-f", "-"}, 60s, DeploymentYaml(ns, replicas));
      ASSERT_TRUE(applied.ok()) << applied.Describe();
    }
    for (const auto& ns : namespaces_) {
      ASSERT_TRUE(Eventually([&] { return Available(ns, replicas); }, 90s)) << ns;
    }
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

// Every namespace is written by exactly the one replica the map gives it to; each replica serves
// a share and says the server filtered for it.
TEST_F(ShardingE2E, ThreeReplicasDivideTheNamespaces) {
  KCM_REQUIRE_TESTBED();
  ASSERT_NO_FATAL_FAILURE(StartReplicas("kcm-e2e-divide", 3));
  ASSERT_NO_FATAL_FAILURE(CreateWorkload("e2e-divide-", 12, 2));
  ExpectNoSurplus(2);
  std::this_thread::sleep_for(2s);  // let the API server finish writing its audit lines
  auto map = ReadMap(group_);
  ASSERT_TRUE(map.has_value());
  std::map<std::string, int> per_replica;
  for (const auto& ns : namespaces_) {
    Replica* server = ServerOf(ns);
    ASSERT_NE(server, nullptr) << ns;
    EXPECT_EQ(Writers(ns), std::set<std::string>{UserOf(server->account())}) << ns;
    ++per_replica[server->account()];
  }
  for (auto& r : replicas_) {
    std::cout << "[sharding] " << r->account() << " serves " << per_replica[r->account()]
              << " of the test's namespaces, controller_sharding_namespaces "
              << r->Metric("controller_sharding_namespaces") << std::endl;
    EXPECT_GT(per_replica[r->account()], 0) << "a replica serves none of 12 namespaces";
    EXPECT_EQ(r->Metric("controller_sharding_server_side_filtering"), 1);
    EXPECT_EQ(r->Metric("controller_sharding_members"), 3);
  }
  EXPECT_EQ(kEnv->Kubectl({"-n", "kube-system", "get", "lease", group_}).ok(), true)
      << "one replica coordinates";
}

// kill -9: the dead replica's namespaces are served again within the lease duration + 5 s; a
// replica that joins takes a share; nothing is created twice.
TEST_F(ShardingE2E, KilledReplicasNamespacesAreServedAgain) {
  KCM_REQUIRE_TESTBED();
  ASSERT_NO_FATAL_FAILURE(StartReplicas("kcm-e2e-kill", 3));
  ASSERT_NO_FATAL_FAILURE(CreateWorkload("e2e-kill-", 6, 2));
  const std::string ns = namespaces_[0];
  Replica* victim = ServerOf(ns);
  ASSERT_NE(victim, nullptr);
  const std::string victim_id = victim->Identity();
  victim->StopWith(SIGKILL);
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(kEnv->Kubectl({"-n", ns, "scale", "deployment", "web", "--replicas=4"}).ok());
  ASSERT_TRUE(Eventually([&] { return Available(ns, 4); }, 60s));
  const auto took = std::chrono::steady_clock::now() - t0;
  std::cout << "[sharding] kill -9: " << ns << " served again after "
            << std::chrono::duration<double>(took).count() << " s (lease duration "
            << kLeaseDuration.count() << " s)" << std::endl;
  EXPECT_LE(took, kLeaseDuration + 5s);
  auto map = ReadMap(group_);
  ASSERT_TRUE(map.has_value());
  EXPECT_FALSE(Owners(*map).contains(victim_id));

  // A new replica joins and is given a share.
  AddReplica();
  Replica& joined = *replicas_.back();
  ASSERT_TRUE(Eventually([&] { return joined.Ready(); }, 60s)) << joined.Log();
  ASSERT_TRUE(Eventually(
      [&] {
        auto m = ReadMap(group_);
        return m && Owners(*m).contains(joined.Identity());
      },
      30s))
      << joined.Log();
  ASSERT_TRUE(kEnv->Kubectl({"-n", ns, "scale", "deployment", "web", "--replicas=2"}).ok());
  for (const auto& n : namespaces_) {
    EXPECT_TRUE(Eventually([&] { return Available(n, 2) && Count(n, "pods") == 2; }, 60s)) << n;
  }
  ExpectNoSurplus(2);
}

// SIGTERM: the replica hands its ranges on before it exits; they are served elsewhere within 2 s.
TEST_F(ShardingE2E, StoppedReplicasNamespacesAreServedWithinTwoSeconds) {
  KCM_REQUIRE_TESTBED();
  ASSERT_NO_FATAL_FAILURE(StartReplicas("kcm-e2e-term", 3));
  ASSERT_NO_FATAL_FAILURE(CreateWorkload("e2e-term-", 6, 2));
  const std::string ns = namespaces_[0];
  Replica* leaving = ServerOf(ns);
  ASSERT_NE(leaving, nullptr);
  const int64_t t0 = NowMicros();
  EXPECT_EQ(leaving->StopWith(SIGTERM, 30s), 0) << leaving->Log();
  ASSERT_TRUE(kEnv->Kubectl({"-n", ns, "scale", "deployment", "web", "--replicas=4"}).ok());
  ASSERT_TRUE(Eventually([&] { return Available(ns, 4); }, 30s));
  const double scaled_s = (NowMicros() - t0) / 1e6;
  Replica* successor = ServerOf(ns);
  ASSERT_NE(successor, nullptr);
  ASSERT_NE(successor, leaving);
  // When the successor started serving it, from its own log.
  auto serving_at = LogLineTime(successor->Log(), "serving shardRange", t0);
  ASSERT_TRUE(serving_at.has_value()) << successor->Log();
  const double served_s = (*serving_at - t0) / 1e6;
  std::cout << "[sharding] SIGTERM: " << ns << " served by another replica after " << served_s
            << " s; scaled up and available after " << scaled_s << " s" << std::endl;
  EXPECT_LE(served_s, 2.0);
  ASSERT_TRUE(kEnv->Kubectl({"-n", ns, "scale", "deployment", "web", "--replicas=2"}).ok());
  EXPECT_TRUE(Eventually([&] { return Available(ns, 2) && Count(ns, "pods") == 2; }, 60s));
  ExpectNoSurplus(2);
}

// Microseconds since the epoch of an RFC 3339 UTC time with microseconds.
std::optional<int64_t> Rfc3339Micro(const std::string& s) {
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

// When each pod create by `user` in `ns` reached the API server (audit requestReceivedTimestamp).
std::vector<int64_t> PodCreateTimes(const std::string& ns, const std::string& user) {
  std::ifstream in(kEnv->info().dir + "/logs/audit.log");
  std::vector<int64_t> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("\"verb\":\"create\"") == std::string::npos ||
        line.find("\"resource\":\"pods\"") == std::string::npos ||
        line.find("\"namespace\":\"" + ns + "\"") == std::string::npos ||
        line.find("\"username\":\"" + user + "\"") == std::string::npos) {
      continue;
    }
    const std::string key = "\"requestReceivedTimestamp\":\"";
    const size_t at = line.find(key);
    if (at == std::string::npos) continue;
    const size_t start = at + key.size();
    if (auto t = Rfc3339Micro(line.substr(start, line.find('"', start) - start))) {
      out.push_back(*t);
    }
  }
  return out;
}

std::string ReplicaSetYaml(const std::string& ns, int replicas) {
  return "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: big\n  namespace: " + ns +
         "\nspec:\n  replicas: " + std::to_string(replicas) +
         "\n  selector:\n    matchLabels:\n      app: big\n  template:\n    metadata:\n"
         "      labels:\n        app: big\n    spec:\n      containers:\n      - name: pause\n"
         "        image: registry.k8s.io/pause:3.10\n";
}

// A replica loses its member Lease mid-way through a slow 150-pod scale-up (5 QPS per controller
// client): it writes nothing after it noticed (beyond 100 ms of loopback transit; creates are
// >= 200 ms apart at 5 QPS) and exits 1; the other replica takes its namespaces once the lease
// duration has passed and finishes the scale-up with no pod too many.
TEST_F(ShardingE2E, NoWriteAfterTheMemberLeaseIsLost) {
  KCM_REQUIRE_TESTBED();
  ASSERT_TRUE(kAuditOn);
  group_ = "kcm-e2e-fence";
  const std::vector<std::string> slow = {"--controllers=replicaset", "--kube-api-qps=5",
                                         "--kube-api-burst=1"};
  for (int i = 0; i < 2; ++i) {
    replicas_.push_back(std::make_unique<Replica>(group_, group_ + "-" + std::to_string(i), slow));
  }
  for (auto& r : replicas_) ASSERT_TRUE(Eventually([&] { return r->Ready(); }, 60s)) << r->Log();
  ASSERT_TRUE(Eventually(
      [&] {
        auto m = ReadMap(group_);
        return m && Owners(*m).size() == 2 && !Owners(*m).contains("");
      },
      30s));
  const std::string ns = "e2e-fence";
  namespaces_.push_back(ns);
  ASSERT_TRUE(kEnv->Kubectl({"create", "namespace", ns}).ok());
  Replica* victim = ServerOf(ns);
  ASSERT_NE(victim, nullptr);
  Replica* heir = victim == replicas_[0].get() ? replicas_[1].get() : replicas_[0].get();
  ASSERT_TRUE(kEnv->Kubectl({"apply", "-f", "-"}, 60s, ReplicaSetYaml(ns, 150)).ok());
  ASSERT_TRUE(Eventually([&] { return Count(ns, "pods") >= 10; }, 60s, 200ms)) << victim->Log();

  const std::string member = group_ + "-member-";
  auto leases = kEnv->Kubectl({"-n", "kube-system", "get", "leases", "-o",
                               "jsonpath={range .items[*]}{.metadata.name} "
                               "{.spec.holderIdentity}{\"\\n\"}{end}"});
  ASSERT_TRUE(leases.ok());
  std::string lease_name;
  std::istringstream lines(leases.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(member, 0) == 0 && line.find(victim->Identity()) != std::string::npos) {
      lease_name = line.substr(0, line.find(' '));
    }
  }
  ASSERT_FALSE(lease_name.empty()) << leases.out;
  auto patched = kEnv->Kubectl({"-n", "kube-system", "patch", "lease", lease_name, "--type=merge",
                                "-p", R"({"spec":{"holderIdentity":"e2e-usurper"}})"});
  ASSERT_TRUE(patched.ok()) << patched.Describe();
  EXPECT_EQ(victim->StopWith(0, 30s), 1) << "the replica should exit 1 after losing its lease\n"
                                         << victim->Log();
  if (victim->Running()) victim->StopWith(SIGKILL);
  auto lost_at = LogLineTime(victim->Log(), "failed to renew lease kube-system/" + lease_name);
  ASSERT_TRUE(lost_at.has_value()) << victim->Log();

  // The heir finishes the scale-up.
  EXPECT_TRUE(Eventually([&] { return Count(ns, "pods") == 150; }, 120s, 500ms))
      << Count(ns, "pods") << " pods\n"
      << heir->Log();
  std::this_thread::sleep_for(3s);  // nothing more comes, and the audit log is written
  EXPECT_EQ(Count(ns, "pods"), 150);
  int before = 0;
  std::vector<int64_t> after;
  for (int64_t t : PodCreateTimes(ns, UserOf(victim->account()))) {
    if (t <= *lost_at + 100000) {
      ++before;
    } else {
      after.push_back(t - *lost_at);
    }
  }
  const size_t by_heir = PodCreateTimes(ns, UserOf(heir->account())).size();
  std::cout << "[sharding] pod creates by the replica that lost its lease: " << before
            << " before, " << after.size() << " after; by the other replica: " << by_heir
            << std::endl;
  EXPECT_GE(before, 10);
  EXPECT_TRUE(after.empty()) << after.size() << " pod creates after the loss; first +"
                             << after.front() / 1000 << " ms";
  EXPECT_GT(by_heir, 0u);
  kEnv->Kubectl({"-n", ns, "scale", "replicaset", "big", "--replicas=0"});
}

}  // namespace
}  // namespace kcm::e2e
