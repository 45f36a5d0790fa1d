// E2E for the Deployment controller (D1–D18 as users see them): our daemon binary runs both
// controllers against the testbed and every step is a kubectl command, as a user would type it.
// Invariants are checked on states sampled continuously while a rollout runs; waits poll until a
// condition holds (the timeouts only bound a failing test, nothing asserts on time).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "pkg/api/json.h"
#include "test/integration/framework/process.h"
#include "test/integration/framework/testenv.h"

extern char** environ;

namespace kcm {
namespace {

using api::json::Value;
using namespace std::chrono_literals;

auto* const kTestbed = testenv::RegisterTestbed({});

int FreePort() {
  auto r = testenv::RunCommand({"python3", "-c",
                                "import socket;s=socket.socket();s.bind(('127.0.0.1',0));"
                                "print(s.getsockname()[1])"});
  return r.ok() ? std::atoi(r.out.c_str()) : 0;
}

// Runs our kube-controller-manager for the whole test process; stops it with SIGTERM at the end.
class DaemonEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    if (!kTestbed->ready()) return;
    Start();
  }
  // kill -9 (no lease release, no flush), then a fresh process.
  void KillAndRestart() {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
    Start();
  }
  void Start() {
    log_ = kTestbed->info().dir + "/logs/kcm-deployment-e2e-" + std::to_string(getpid()) + ".log";
    port_ = FreePort();
    std::vector<std::string> args = {
        KCM_DAEMON_PATH, "--kubeconfig=" + kTestbed->info().kcm_kubeconfig,
        // The test user's RBAC only allows the kube-controller-manager-cpp lease; this process
        // is the only controller manager of the testbed, so it runs without one.
        "--leader-elect=false", "--bind-address=127.0.0.1",
        "--secure-port=" + std::to_string(port_), "--v=2"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, log_.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                     0644);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    ASSERT_EQ(posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
  }
  void TearDown() override {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 200 && waitpid(pid_, &status, WNOHANG) == 0; ++i) {
      std::this_thread::sleep_for(100ms);
    }
    if (waitpid(pid_, &status, WNOHANG) == 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
  }
  const std::string& log() const { return log_; }
  // The daemon's /metrics sample `name{labels}`; nullopt when /metrics does not answer or has no
  // such series. Read as the testbed's admin (the daemon delegates /metrics authorization to the
  // API server).
  std::optional<double> Metric(const std::string& series) const {
    auto [code, body] = testenv::HttpsGet(port_, "/metrics", kTestbed->info().admin_token);
    if (code != 200) return std::nullopt;
    for (size_t pos = body.find(series + " "); pos != std::string::npos;
         pos = body.find(series + " ", pos + 1)) {
      if (pos == 0 || body[pos - 1] == '\n') return std::atof(body.c_str() + pos + series.size());
    }
    return std::nullopt;
  }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string log_;
};
auto* const kDaemon =
    static_cast<DaemonEnvironment*>(::testing::AddGlobalTestEnvironment(new DaemonEnvironment));

class DeploymentE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    KCM_REQUIRE_TESTBED();
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = info->name();
    for (auto& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? std::tolower(c) : '-';
    ns_ = "dep-e2e-" + name.substr(0, 30) + "-" + std::to_string(getpid());
    Must({"create", "namespace", ns_});
  }
  void TearDown() override {
    if (!ns_.empty()) (void)kTestbed->Kubectl({"delete", "namespace", ns_, "--wait=false"});
  }

  testenv::CommandResult K(std::vector<std::string> args, std::chrono::seconds timeout = 60s) {
    args.push_back("-n");
    args.push_back(ns_);
    return kTestbed->Kubectl(args, timeout);
  }
  std::string Must(std::vector<std::string> args, std::chrono::seconds timeout = 60s) {
    auto r = K(args, timeout);
    EXPECT_TRUE(r.ok()) << "kubectl " << ::testing::PrintToString(args) << ": " << r.Describe()
                        << "\ndaemon log: " << kDaemon->log();
    return r.out;
  }
  Value GetJson(std::vector<std::string> args) {
    args.push_back("-o");
    args.push_back("json");
    auto r = K(args);
    if (!r.ok()) return Value();
    auto v = api::json::Parse(r.out);
    return v.ok() ? *v : Value();
  }
  // Polls `check` until it returns true (each poll reads fresh state through kubectl).
  bool WaitFor(const std::function<bool()>& check, std::chrono::seconds limit = 120s) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      if (check()) return true;
      std::this_thread::sleep_for(200ms);
    }
    return check();
  }
  void CreateDeployment(const std::string& name, int replicas, const std::string& patch = "") {
    Must({"create", "deployment", name, "--image=img:1", "--replicas=" + std::to_string(replicas)});
    if (!patch.empty()) Must({"patch", "deployment", name, "-p", patch});
    Must({"rollout", "status", "deployment/" + name, "--timeout=120s"}, 130s);
  }

  static int64_t Int(const Value& v, api::json::Path path) {
    const Value* x = api::json::GetPath(v, path);
    return x != nullptr && x->is_number() ? x->as_int64().value_or(0) : 0;
  }
  static std::string Str(const Value& v, api::json::Path path) {
    const Value* x = api::json::GetPath(v, path);
    return x != nullptr && x->is_string() ? x->as_string() : "";
  }
  static std::string Image(const Value& obj) {
    const Value* c = api::json::GetPath(obj, {"spec", "template", "spec", "containers"});
    return c != nullptr && c->is_array() && !c->as_array().empty()
               ? Str(c->as_array()[0], {"image"})
               : "";
  }
  // ReplicaSets of the namespace: name → {image, spec.replicas}.
  std::map<std::string, std::pair<std::string, int64_t>> ReplicaSets() {
    std::map<std::string, std::pair<std::string, int64_t>> out;
    Value list = GetJson({"get", "rs"});
    if (const Value* items = list.Find("items"); items != nullptr && items->is_array()) {
      for (const auto& rs : items->as_array()) {
        out[Str(rs, {"metadata", "name"})] = {Image(rs), Int(rs, {"spec", "replicas"})};
      }
    }
    return out;
  }
  std::map<std::string, int64_t> SpecByImage() {
    std::map<std::string, int64_t> out;
    for (const auto& [name, v] : ReplicaSets()) out[v.first] += v.second;
    return out;
  }
  bool Synced(const std::string& name) {
    Value d = GetJson({"get", "deployment", name});
    return Int(d, {"status", "observedGeneration"}) == Int(d, {"metadata", "generation"});
  }
  std::string ProgressingReason(const std::string& name) {
    Value d = GetJson({"get", "deployment", name});
    const Value* conds = api::json::GetPath(d, {"status", "conditions"});
    if (conds == nullptr || !conds->is_array()) return "";
    for (const auto& c : conds->as_array()) {
      if (Str(c, {"type"}) == "Progressing") return Str(c, {"reason"});
    }
    return "";
  }

  // Samples pods continuously on a thread until Stop().
  struct PodSample {
    int live = 0;                        // not being deleted
    int ready = 0;                       // live and Ready
    std::map<std::string, int> by_hash;  // every pod (terminating too) by pod-template-hash
    int64_t rs_replicas = 0;             // sum of the ReplicaSets' spec.replicas
  };
  class Sampler {
   public:
    explicit Sampler(DeploymentE2E* t) : t_(t), thread_([this] { Loop(); }) {}
    std::vector<PodSample> Stop() {
      done_ = true;
      thread_.join();
      return samples_;
    }

   private:
    void Loop() {
      while (!done_) {
        PodSample s;
        Value rss = t_->GetJson({"get", "rs"});
        const Value* rs_items = rss.Find("items");
        if (rs_items == nullptr || !rs_items->is_array()) continue;
        for (const auto& rs : rs_items->as_array()) {
          const Value* r = api::json::GetPath(rs, {"spec", "replicas"});
          if (r != nullptr) s.rs_replicas += r->as_int64().value_or(0);
        }
        Value pods = t_->GetJson({"get", "pods"});
        const Value* items = pods.Find("items");
        if (items == nullptr || !items->is_array()) continue;
        for (const auto& p : items->as_array()) {
          const std::string hash = Str(p, {"metadata", "labels", "pod-template-hash"});
          s.by_hash[hash]++;
          if (api::json::GetPath(p, {"metadata", "deletionTimestamp"}) != nullptr) continue;
          if (Str(p, {"status", "phase"}) == "Succeeded" || Str(p, {"status", "phase"}) == "Failed")
            continue;
          s.live++;
          const Value* conds = api::json::GetPath(p, {"status", "conditions"});
          if (conds != nullptr && conds->is_array()) {
            for (const auto& c : conds->as_array()) {
              if (Str(c, {"type"}) == "Ready" && Str(c, {"status"}) == "True") s.ready++;
            }
          }
        }
        samples_.push_back(std::move(s));
      }
    }
    DeploymentE2E* t_;
    std::atomic<bool> done_{false};
    std::vector<PodSample> samples_;
    std::thread thread_;
  };

  std::string ns_;
};

// D6–D8, D13–D15, D5: a rolling update stays within maxSurge/maxUnavailable, completes, and
// kubectl's rollout status/history/undo work on our revisions.
TEST_F(DeploymentE2E, RollingUpdateBoundsHistoryAndUndo) {
  // minReadySeconds slows each step down so the sampler sees the rollout in flight.
  CreateDeployment("web", 4,
                   R"({"spec":{"minReadySeconds":2,"strategy":{"rollingUpdate":{"maxSurge":1,)"
                   R"("maxUnavailable":1}}}})");
  Sampler sampler(this);
  Must({"set", "image", "deployment/web", "img=img:2"});
  Must({"rollout", "status", "deployment/web", "--timeout=120s"}, 130s);
  std::vector<PodSample> samples = sampler.Stop();
  ASSERT_FALSE(samples.empty());
  for (size_t i = 0; i < samples.size(); ++i) {
    // maxSurge bounds what the Deployment controller asks of its ReplicaSets (upstream's
    // NewRSNewReplicas counts spec.replicas). Pods may briefly exceed it: the old ReplicaSet's
    // controller deletes its pod and the new one's creates one concurrently, in upstream too.
    EXPECT_LE(samples[i].rs_replicas, 4 + 1)
        << "sample " << i << ": ReplicaSets asked for more than replicas + maxSurge";
    EXPECT_GE(samples[i].ready, 4 - 1)
        << "sample " << i << ": fewer than replicas - maxUnavailable";
  }
  std::cout << "[ sampled  ] " << samples.size() << " pod states during the rollout\n";

  std::string history = Must({"rollout", "history", "deployment/web"});
  EXPECT_NE(history.find("\n1 "), std::string::npos) << history;
  EXPECT_NE(history.find("\n2 "), std::string::npos) << history;
  EXPECT_EQ(SpecByImage(), (std::map<std::string, int64_t>{{"img:1", 0}, {"img:2", 4}}));

  // undo → previous template, as revision 3.
  Must({"rollout", "undo", "deployment/web"});
  Must({"rollout", "status", "deployment/web", "--timeout=120s"}, 130s);
  Value d = GetJson({"get", "deployment", "web"});
  EXPECT_EQ(Image(d), "img:1");
  EXPECT_EQ(Str(d, {"metadata", "annotations", "deployment.kubernetes.io/revision"}), "3");
  EXPECT_EQ(SpecByImage(), (std::map<std::string, int64_t>{{"img:1", 4}, {"img:2", 0}}));

  // undo --to-revision=2 → img:2 again, as revision 4; history shows 3 and 4.
  Must({"rollout", "undo", "deployment/web", "--to-revision=2"});
  Must({"rollout", "status", "deployment/web", "--timeout=120s"}, 130s);
  d = GetJson({"get", "deployment", "web"});
  EXPECT_EQ(Image(d), "img:2");
  EXPECT_EQ(Str(d, {"metadata", "annotations", "deployment.kubernetes.io/revision"}), "4");
  history = Must({"rollout", "history", "deployment/web"});
  EXPECT_NE(history.find("\n3 "), std::string::npos) << history;
  EXPECT_NE(history.find("\n4 "), std::string::npos) << history;
  EXPECT_EQ(ReplicaSets().size(), 2u);  // reused RSs, no extra ones
}

// D11: a paused Deployment does not roll out; resume rolls out.
TEST_F(DeploymentE2E, PauseAndResume) {
  CreateDeployment("web", 2);
  Must({"rollout", "pause", "deployment/web"});
  Must({"set", "image", "deployment/web", "img=img:2"});
  ASSERT_TRUE(
      WaitFor([&] { return Synced("web") && ProgressingReason("web") == "DeploymentPaused"; }));
  EXPECT_EQ(SpecByImage(), (std::map<std::string, int64_t>{{"img:1", 2}}));
  Must({"rollout", "resume", "deployment/web"});
  Must({"rollout", "status", "deployment/web", "--timeout=120s"}, 130s);
  EXPECT_EQ(SpecByImage(), (std::map<std::string, int64_t>{{"img:1", 0}, {"img:2", 2}}));
}

// D9: `kubectl scale` while a rollout is stuck shares the new replicas proportionally.
TEST_F(DeploymentE2E, ScaleMidRolloutIsProportional) {
  CreateDeployment("web", 10,
                   R"({"spec":{"strategy":{"rollingUpdate":{"maxSurge":3,"maxUnavailable":2}}}})");
  // New pods can never be scheduled, so the rollout stops at old 8 / new 5 (13 = 10 + surge,
  // 8 = 10 − maxUnavailable available).
  Must({"patch", "deployment", "web", "-p",
        R"({"spec":{"template":{"spec":{"nodeSelector":{"kcm-e2e/never":"true"}}}}})"});
  ASSERT_TRUE(WaitFor([&] {
    auto rss = ReplicaSets();
    std::multiset<int64_t> sizes;
    for (const auto& [n, v] : rss) sizes.insert(v.second);
    return rss.size() == 2 && sizes == std::multiset<int64_t>{5, 8};
  })) << ::testing::PrintToString(SpecByImage());
  std::string old_rs, new_rs;
  for (const auto& [n, v] : ReplicaSets()) (v.second == 8 ? old_rs : new_rs) = n;

  Must({"scale", "deployment/web", "--replicas=20"});
  // 23 = 20 + surge shared by size: old 8·23/13 → 14, new 5·23/13 → 9.
  EXPECT_TRUE(WaitFor([&] {
    auto rss = ReplicaSets();
    return rss[old_rs].second == 14 && rss[new_rs].second == 9;
  })) << ::testing::PrintToString(ReplicaSets());

  Must({"scale", "deployment/web", "--replicas=5"});
  // 8 = 5 + surge shared by size: old 14·8/23 → 5, new 9·8/23 → 3 (the events record it), after
  // which the rollout goes on within the bounds to old 3 (= 5 − maxUnavailable) / new 5.
  EXPECT_TRUE(WaitFor([&] {
    const std::string events =
        Must({"get", "events", "-o", "jsonpath={range .items[*]}{.message}{\"\\n\"}{end}"});
    return events.find("Scaled down replica set " + old_rs + " from 14 to 5") !=
               std::string::npos &&
           events.find("Scaled down replica set " + new_rs + " from 9 to 3") != std::string::npos;
  })) << Must({"get", "events"});
  EXPECT_TRUE(WaitFor([&] {
    auto rss = ReplicaSets();
    return rss[old_rs].second == 3 && rss[new_rs].second == 5;
  })) << ::testing::PrintToString(ReplicaSets());
}

// D10: Recreate never runs old and new pods together.
TEST_F(DeploymentE2E, RecreateNeverOverlaps) {
  CreateDeployment("web", 3, R"({"spec":{"strategy":{"type":"Recreate","rollingUpdate":null}}})");
  Sampler sampler(this);
  Must({"set", "image", "deployment/web", "img=img:2"});
  Must({"rollout", "status", "deployment/web", "--timeout=120s"}, 130s);
  std::vector<PodSample> samples = sampler.Stop();
  ASSERT_FALSE(samples.empty());
  for (size_t i = 0; i < samples.size(); ++i) {
    EXPECT_LE(samples[i].by_hash.size(), 1u)
        << "sample " << i
        << ": pods of two templates at once: " << ::testing::PrintToString(samples[i].by_hash);
  }
  EXPECT_EQ(SpecByImage(), (std::map<std::string, int64_t>{{"img:1", 0}, {"img:2", 3}}));
}

// D13: a rollout that cannot progress reports ProgressDeadlineExceeded and rollout status fails.
TEST_F(DeploymentE2E, ProgressDeadlineExceeded) {
  CreateDeployment("web", 2);
  Must({"patch", "deployment", "web", "-p",
        R"({"spec":{"progressDeadlineSeconds":5,"template":{"spec":{"nodeSelector":)"
        R"({"kcm-e2e/never":"true"}}}}})"});
  auto r = K({"rollout", "status", "deployment/web", "--timeout=120s"}, 130s);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.err.find("exceeded its progress deadline"), std::string::npos) << r.Describe();
  EXPECT_EQ(ProgressingReason("web"), "ProgressDeadlineExceeded");
}

// D16: revisionHistoryLimit old ReplicaSets are kept, older ones deleted.
TEST_F(DeploymentE2E, RevisionHistoryLimit) {
  CreateDeployment("web", 1, R"({"spec":{"revisionHistoryLimit":1}})");
  for (const char* image : {"img:2", "img:3", "img:4"}) {
    Must({"set", "image", "deployment/web", std::string("img=") + image});
    Must({"rollout", "status", "deployment/web", "--timeout=120s"}, 130s);
  }
  EXPECT_TRUE(WaitFor([&] { return ReplicaSets().size() == 2; }))
      << ::testing::PrintToString(ReplicaSets());
  EXPECT_EQ(SpecByImage(), (std::map<std::string, int64_t>{{"img:3", 0}, {"img:4", 1}}));
}

// Crash safety: kill -9 mid-rollout and restart → the rollout completes with no extra
// ReplicaSet and never more than replicas + maxSurge pods.
TEST_F(DeploymentE2E, KillDuringRolloutAndRestart) {
  CreateDeployment("web", 6,
                   R"({"spec":{"minReadySeconds":2,"strategy":{"rollingUpdate":{"maxSurge":2,)"
                   R"("maxUnavailable":1}}}})");
  Sampler sampler(this);
  Must({"set", "image", "deployment/web", "img=img:2"});
  // Mid-rollout: the new RS exists and has not reached its size.
  ASSERT_TRUE(WaitFor([&] {
    auto by_image = SpecByImage();
    return by_image["img:2"] > 0 && by_image["img:2"] < 6;
  }));
  kDaemon->KillAndRestart();
  Must({"rollout", "status", "deployment/web", "--timeout=120s"}, 130s);
  std::vector<PodSample> samples = sampler.Stop();
  for (size_t i = 0; i < samples.size(); ++i) {
    EXPECT_LE(samples[i].live, 6 + 2) << "sample " << i;
    EXPECT_GE(samples[i].ready, 6 - 1) << "sample " << i;
  }
  EXPECT_EQ(ReplicaSets().size(), 2u) << ::testing::PrintToString(ReplicaSets());
  EXPECT_EQ(SpecByImage(), (std::map<std::string, int64_t>{{"img:1", 0}, {"img:2", 6}}));
}

// Counts the lines of the daemon's log, from byte `from` on, that contain every one of `needles`.
size_t CountDaemonLogLines(const std::vector<std::string>& needles, std::streamoff from) {
  std::ifstream in(kDaemon->log());
  in.seekg(from);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    bool all = true;
    for (const auto& needle : needles) all = all && line.find(needle) != std::string::npos;
    if (all) ++n;
  }
  return n;
}

std::streamoff DaemonLogSize() {
  std::ifstream in(kDaemon->log(), std::ios::ate);
  return in ? static_cast<std::streamoff>(in.tellg()) : 0;
}

// Stale caches (deployment.md D8): a Deployment at 8 replicas patched in one step to 7 replicas and
// a new template, 12 times. The scale-down of the old ReplicaSet is our own write; a sync that sees
// the new RS while the old ReplicaSet's status still predates that scale-down trips
// cleanupUnhealthyReplicas ("got invalid request to scale down"). Upstream v1.37.2 drops that
// error in reconcileOldReplicaSets; we used to fail the sync and retry it every few milliseconds
// (208 failed syncs in 12 rounds on this test bed before the fix). Failed Deployment syncs come
// from controller_runtime_reconcile_errors_total; the daemon logs each one ("Error syncing
// deployment ...", --v=2). Asserted: no sync fails for the stale status, and at most 2 fail for
// anything but a write conflict (nothing else in this scenario fails; 2 leaves room for one
// transient API error). Write conflicts (409: a write based on a Deployment or ReplicaSet the
// cache had not yet refreshed) are reported, not bounded: upstream v1.37 has no read-your-own-
// writes check for Deployments either. Every rollout must complete with the final sizes.
TEST_F(DeploymentE2E, ScaleDownWithNewTemplateDoesNotRetryOnStaleStatus) {
  constexpr int kRounds = 12;
  const std::string errors_series =
      R"(controller_runtime_reconcile_errors_total{controller="deployment"})";
  CreateDeployment("web", 8);
  const std::streamoff log_start = DaemonLogSize();
  const std::optional<double> errors_start = kDaemon->Metric(errors_series);
  ASSERT_TRUE(errors_start.has_value()) << "no " << errors_series << " on /metrics";
  for (int i = 0; i < kRounds; ++i) {
    SCOPED_TRACE("round " + std::to_string(i));
    if (i > 0) {
      Must({"scale", "deployment/web", "--replicas=8"});
      Must({"rollout", "status", "deployment/web", "--timeout=120s"}, 130s);
    }
    const std::string image = "img:r" + std::to_string(i);
    Must({"patch", "deployment", "web", "-p",
          R"({"spec":{"replicas":7,"template":{"spec":{"containers":[{"name":"img","image":")" +
              image + R"("}]}}}})"});
    Must({"rollout", "status", "deployment/web", "--timeout=120s"}, 130s);
    ASSERT_TRUE(WaitFor([&] { return SpecByImage()[image] == 7; }))
        << ::testing::PrintToString(ReplicaSets());
  }
  const std::optional<double> errors_end = kDaemon->Metric(errors_series);
  ASSERT_TRUE(errors_end.has_value());
  const double failed = *errors_end - *errors_start;
  const size_t scale_down_errors =
      CountDaemonLogLines({"Error syncing deployment", "invalid request to scale down"}, log_start);
  const size_t conflicts =
      CountDaemonLogLines({"Error syncing deployment", "409 Conflict"}, log_start);
  const size_t stale_waits = CountDaemonLogLines({"is not as new as written version"}, log_start);
  std::cout << "[ figures  ] " << kRounds << " rounds: " << failed << " failed Deployment syncs ("
            << conflicts << " write conflicts, " << scale_down_errors
            << " 'invalid request to scale down'), " << stale_waits
            << " ReplicaSet syncs deferred for a stale cache\n";
  EXPECT_EQ(scale_down_errors, 0u) << "daemon log: " << kDaemon->log();
  EXPECT_LE(failed - static_cast<double>(conflicts), 2.0) << "daemon log: " << kDaemon->log();
}

}  // namespace
}  // namespace kcm
